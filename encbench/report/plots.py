"""The HTML reports' plots: matplotlib figures returned as inline `<svg>` text.

Each function takes the summary's models (report/models.py) and returns one `<svg>` element,
or None when there is nothing to draw: no files, no network.  matplotlib is
imported inside the functions: its import costs about half a second that `encbench run` and
report.md need not pay.  Figures are built with `Figure()` rather than pyplot, so no GUI
backend is chosen and no global state is left behind.

Conventions, as in pyperf, hyperfine and sysbench: units in the axis labels; the variants are
named `encrypted` and `no encryption` as in the tables; series differ in marker and line style
as well as colour (readable in grey); text stays text (`svg.fonttype: none`); the output is
byte-for-byte reproducible (a fixed `svg.hashsalt`, no date), so snapshots are stable.
"""

from __future__ import annotations

import html
import io
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from encbench.report.models import Estimate, Pair, Record, Sample

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
VARIANT_STYLE: dict[str, dict[str, Any]] = {
    "encrypted": {"label": "encrypted", "color": "#d55e00", "marker": "o", "linestyle": "-"},
    "plain": {"label": "no encryption", "color": "#0072b2", "marker": "s", "linestyle": "--"},
}
METRIC_STYLE: dict[str, dict[str, Any]] = {
    "tps": {"label": "throughput (TPS)", "color": "#222222", "marker": "o", "linestyle": "-"},
    "cpu_ms_per_txn": {
        "label": "server CPU per txn",
        "color": "#009e73",
        "marker": "D",
        "linestyle": ":",
    },
}
SIDE_STYLE: tuple[dict[str, Any], ...] = (
    {"color": "#0072b2", "marker": "o", "linestyle": "-"},
    {"color": "#e69f00", "marker": "s", "linestyle": "--"},
    # More sides than a comparison's two: the instance shapes of one run.
    {"color": "#009e73", "marker": "D", "linestyle": ":"},
    {"color": "#cc79a7", "marker": "^", "linestyle": "-."},
)
COST_LABEL = "cost of encryption (%)\n> 0: slower / more CPU"
SIZE = (4.8, 3.1)

# Any keys: matplotlib types rcParams keys as a Literal of every known name.
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.4,
    "lines.markersize": 5,
}


# Fixed margins for the line plots, which all share SIZE and a two-line title: matplotlib's
# automatic layouts draw every figure twice (constrained: 2.5 s for 12 plots here, fixed:
# 0.9 s), and the report must render in seconds.
MARGINS = {"left": 0.15, "right": 0.97, "bottom": 0.15, "top": 0.84}


def render_svg(
    draw: Callable[[Figure], None],
    name: str,
    size: tuple[float, float],
    label: str,
    auto_layout: bool = False,
) -> str:
    """Draw into a fresh figure and return it as an `<svg>` element for inlining in HTML.

    `name` salts matplotlib's element ids and prefixes every id: several SVGs in one page share
    one id namespace, and a clip path from one plot must not clip another.  `label` is what a
    screen reader says for the picture."""
    import matplotlib
    from matplotlib.figure import Figure

    prefix = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "plot"
    with matplotlib.rc_context({**_RC, "svg.hashsalt": prefix}):
        fig = Figure(figsize=size, layout="constrained" if auto_layout else None)
        if not auto_layout:
            fig.subplots_adjust(**MARGINS)
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue().decode("utf-8")
    # The XML prolog and DOCTYPE (which names a URL) are not allowed inside HTML; the metadata
    # block only carries matplotlib's name and URL.
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    aria = html.escape(label)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{aria}" ', 1).strip()


def threads_axis(ax: Axes, threads: Sequence[int]) -> None:
    """Log₂ thread axis with exactly the measured counts as ticks, as sysbench sweeps double."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xticks(list(threads), [str(t) for t in threads])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(min(threads) / 1.5, max(threads) * 1.5)
    ax.set_xlabel("client threads (sysbench --threads, log₂ scale)")


def cost_points(
    ax: Axes, threads: Sequence[float], comps: Sequence[Estimate], style: dict[str, Any]
) -> None:
    """Overhead points with 95% CI bars; filled where the CI excludes 0, hollow where not."""
    ys = [c.overhead_pct for c in comps]
    cis = [c.overhead_ci_pct for c in comps]
    low = [y - ci[0] if ci else 0.0 for y, ci in zip(ys, cis, strict=True)]
    high = [ci[1] - y if ci else 0.0 for y, ci in zip(ys, cis, strict=True)]
    color = style["color"]
    ax.errorbar(
        threads,
        ys,
        yerr=[low, high],
        color=color,
        marker=style["marker"],
        linestyle=style["linestyle"],
        capsize=3,
        label=style["label"],
        markerfacecolor="white",
    )
    sig = [(t, y) for t, y, ci in zip(threads, ys, cis, strict=True) if ci and ci[0] * ci[1] > 0]
    if sig:
        # Above errorbar's own markers, which it draws a little above the default zorder.
        ax.plot(
            *zip(*sig, strict=True), linestyle="none", marker=style["marker"], color=color, zorder=4
        )


def dodge(threads: Sequence[int], k: int, of: int) -> list[float]:
    """Shift series sideways on the log axis so their CI bars do not hide each other."""
    step = 2 ** (0.07 * (k - (of - 1) / 2))
    return [t * step for t in threads]


def zero_line(ax: Axes) -> None:
    # Above the grid (zorder 1.5), below the data.
    ax.axhline(0.0, color="black", linewidth=0.8, zorder=1.8)


def comparison_svg(
    groups: Sequence[tuple[Sequence[int], Mapping[str, Sequence[Estimate]]]],
    labels: Sequence[str],
    title: str,
) -> str | None:
    """Two panels (TPS, server CPU per transaction): the cost of encryption in A and in B
    (or in each instance shape, at most len(SIDE_STYLE)) against threads.  `groups` holds,
    per side, its thread counts and per metric the estimates of its cells."""
    if not any(threads for threads, _ in groups):
        return None

    def draw(fig: Figure) -> None:
        axes = fig.subplots(1, 2, sharex=True)
        every = sorted({t for threads, _ in groups for t in threads})
        for ax, metric in zip(axes, METRIC_STYLE, strict=True):
            for k, ((threads, comps), label) in enumerate(zip(groups, labels, strict=True)):
                if threads:
                    style = {**SIDE_STYLE[k % len(SIDE_STYLE)], "label": label}
                    cost_points(ax, dodge(threads, k, len(groups)), comps[metric], style)
            zero_line(ax)
            threads_axis(ax, every)
            ax.set_title(METRIC_STYLE[metric]["label"])
        axes[0].set_ylabel(COST_LABEL)
        axes[0].legend(loc="best")
        fig.suptitle(f"Cost of encryption, {title} (bars: 95% CI; filled: CI excludes 0)")

    return render_svg(
        draw, f"compare-{title}", (9.6, 3.3), f"cost of encryption, {' and '.join(labels)}"
    )


def crypto_svg(crypto: Record) -> str | None:
    """Crypto capacity bars from `CryptoCapacity.to_json()`: MB/s per cipher at 16 KiB (an
    InnoDB page) with and without AES-NI, and signatures/s for RSA/ECDSA; one core each."""
    from encbench.capacity import PAGE_BYTES

    ciphers = [
        c
        for c in crypto.get("ciphers", [])
        if c.get("cores") == 1 and c.get("block_bytes") == PAGE_BYTES
    ]
    asym = [a for a in crypto.get("asymmetric", []) if a.get("cores") == 1 and a.get("accel")]
    if not ciphers and not asym:
        return None
    names = list(dict.fromkeys(_cipher_label(c) for c in ciphers))
    rows = max(len(names), len(asym))

    def draw(fig: Figure) -> None:
        axes = fig.subplots(1, int(bool(names)) + int(bool(asym)), squeeze=False)[0]
        if names:
            _cipher_bars(axes[0], ciphers, names)
        if asym:
            _sign_bars(axes[-1], asym)

    # Bar labels of varying length: here the automatic layout is worth its second draw.
    return render_svg(
        draw, "crypto", (9.6, 1.3 + 0.36 * rows), "crypto capacity bars", auto_layout=True
    )


def _cipher_label(entry: Mapping[str, Any]) -> str:
    direction = entry.get("direction", "encrypt")
    return str(entry["cipher"]) + ("" if direction == "encrypt" else f" ({direction})")


def _cipher_bars(ax: Axes, ciphers: list[Mapping[str, Any]], names: list[str]) -> None:
    by_key = {(_cipher_label(c), bool(c.get("accel"))): c for c in ciphers}
    height = 0.38
    for accel, shift, fill, hatch in ((True, -0.2, "#0072b2", ""), (False, 0.2, "white", "////")):
        ys, values = [], []
        for i, name in enumerate(names):
            entry = by_key.get((name, accel))
            if entry is not None and entry.get("mb_per_s_mean") is not None:
                ys.append(i + shift)
                values.append(float(entry["mb_per_s_mean"]))
        if not ys:
            continue
        bars = ax.barh(
            ys,
            values,
            height=height,
            color=fill,
            edgecolor="#0072b2",
            hatch=hatch,
            label="AES-NI on" if accel else "AES-NI off",
        )
        _label_bars(ax, bars, values)
    bar_axes(
        ax,
        names,
        "MB/s, 16 KiB blocks, one core (MB = 10⁶ bytes)",
        "Symmetric ciphers (openssl speed)",
    )
    ax.legend(loc="lower right")


def _sign_bars(ax: Axes, asym: list[Mapping[str, Any]]) -> None:
    names = [str(a["algorithm"]) for a in asym]
    values = [float(a["sign_per_s_mean"]) for a in asym]
    bars = ax.barh(range(len(names)), values, height=0.5, color="#cc79a7", edgecolor="#7a3d63")
    _label_bars(ax, bars, values)
    bar_axes(ax, names, "signatures/s, one core", "Public-key signing (openssl speed)")


def _label_bars(ax: Axes, bars: Any, values: list[float]) -> None:
    ax.bar_label(bars, labels=[f"{v:,.0f}" for v in values], padding=2, fontsize=7.5)


def bar_axes(ax: Axes, names: list[str], xlabel: str, title: str) -> None:
    """Horizontal bars read top-down in the given order, value labels room to the right."""
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.18)
    ax.set_xlabel(xlabel)
    ax.set_title(title)


def cost_rows_svg(
    rows: Sequence[str],
    series: Sequence[tuple[str, Sequence[Estimate | None]]],
    title: str,
    name: str,
    xlabel: str = "cost of encryption (%)  > 0: slower / more",
) -> str | None:
    """The cost of encryption per row (a cell: an operation, a transfer, a workload) with its
    95% CI, one marker per series (two result sets, or two metrics); filled where the CI
    excludes 0.  A series without an estimate for a row draws nothing there."""
    if not rows or not any(e is not None for _, estimates in series for e in estimates):
        return None
    height = max(2.2, 0.9 + 0.32 * len(rows) * max(1, len(series)) ** 0.5)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        spread = 0.18 if len(series) > 1 else 0.0
        for k, (label, estimates) in enumerate(series):
            style = {**SIDE_STYLE[k % len(SIDE_STYLE)], "label": label, "linestyle": "none"}
            offset = spread * (k - (len(series) - 1) / 2)
            found = [(i + offset, e) for i, e in enumerate(estimates) if e is not None]
            if not found:
                continue
            ys, comps = [y for y, _ in found], [e for _, e in found]
            xs = [c.overhead_pct for c in comps]
            cis = [c.overhead_ci_pct for c in comps]
            low = [x - ci[0] if ci else 0.0 for x, ci in zip(xs, cis, strict=True)]
            high = [ci[1] - x if ci else 0.0 for x, ci in zip(xs, cis, strict=True)]
            ax.errorbar(
                xs,
                ys,
                xerr=[low, high],
                color=style["color"],
                marker=style["marker"],
                linestyle="none",
                capsize=3,
                label=label,
                markerfacecolor="white",
            )
            sig = [(x, y) for x, y, ci in zip(xs, ys, cis, strict=True) if ci and ci[0] * ci[1] > 0]
            if sig:
                ax.plot(
                    *zip(*sig, strict=True),
                    linestyle="none",
                    marker=style["marker"],
                    color=style["color"],
                    zorder=4,
                )
        ax.axvline(0.0, color="black", linewidth=0.8, zorder=1.8)
        ax.set_yticks(range(len(rows)), list(rows))
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title}\nbars: 95% CI; filled: CI excludes 0")
        if len(series) > 1:
            ax.legend(loc="best")

    return render_svg(draw, name, (7.2, height), f"{title}, per row", auto_layout=True)


# Per row label line: the row's height grows with its wrapped label so labels never overlap.
ROW_LINE_IN = 0.15
ROW_LABEL_CHARS = 40
CI_BARS = "bars: 95% CI of each mean"


def row_labels(rows: Sequence[str]) -> list[str]:
    """Row labels wrapped to lines of ROW_LABEL_CHARS: a transfer's label names its method,
    cipher, threads and AES-NI, too long for one line beside a plot."""
    return [textwrap.fill(r, ROW_LABEL_CHARS, break_on_hyphens=False) for r in rows]


def rows_height(rows: Sequence[str]) -> float:
    """Inches for a panel of these (wrapped) rows, both variants' points in each."""
    lines = max((r.count("\n") + 1 for r in rows), default=1)
    return len(rows) * max(0.36, ROW_LINE_IN * lines + 0.08)


def log_if_wide(ax: Axes, values: Sequence[float]) -> None:
    """A log value axis (x) where the values span more than 10×: a 20% difference stays
    visible on a row of seconds beside a row of minutes."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    positive = [v for v in values if v > 0]
    if not positive or max(positive) / min(positive) <= 10:
        return
    ax.set_xscale("log")
    # Plain numbers at 1, 2 and 5 of each decade: "2×10²" is harder to read than 200.
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


class StudyCell(Protocol):
    """A study's cell summary as the per-row plots read it."""

    @property
    def label(self) -> str: ...

    @property
    def rounds(self) -> int: ...

    @property
    def variants(self) -> Pair[Any] | None: ...

    @property
    def comparisons(self) -> dict[str, Estimate]: ...


VC = TypeVar("VC", bound=StudyCell)


def measured(cells: Sequence[VC]) -> list[VC]:
    """The cells with rounds to draw, in their order."""
    return [c for c in cells if c.rounds and c.variants is not None]


def variant_samples(cells: Sequence[StudyCell], metric: str) -> list[tuple[Sample, Sample]]:
    """Each measured cell's two samples of one metric, (plain, encrypted)."""
    return [
        (getattr(c.variants.plain, metric), getattr(c.variants.encrypted, metric))
        for c in measured(cells)
        if c.variants is not None
    ]


def variant_rows(
    ax: Axes,
    pairs: Sequence[tuple[Sample, Sample]],
    names: Mapping[str, str] | None = None,
) -> list[float]:
    """Per row (top-down), the mean of each variant, (plain, encrypted), as a point with the
    95% CI of that mean as a horizontal bar; a variant of one round has no CI, so a point
    alone.  Returns every value drawn, ends of the bars included, for the axis' scale."""
    names = names or {}
    drawn: list[float] = []
    for k, (variant, shift) in enumerate((("plain", 0.17), ("encrypted", -0.17))):
        style = VARIANT_STYLE[variant]
        samples = [pair[k] for pair in pairs]
        means = [s.mean for s in samples]
        bands = [s.ci95 or (s.mean, s.mean) for s in samples]
        ax.errorbar(
            means,
            [i + shift for i in range(len(pairs))],
            xerr=[
                [max(0.0, m - lo) for m, (lo, _) in zip(means, bands, strict=True)],
                [max(0.0, hi - m) for m, (_, hi) in zip(means, bands, strict=True)],
            ],
            color=style["color"],
            marker=style["marker"],
            linestyle="none",
            capsize=3,
            label=names.get(variant, style["label"]),
        )
        drawn += means + [v for band in bands for v in band]
    return drawn


def rows_axis(ax: Axes, rows: Sequence[str], xlabel: str, title: str) -> None:
    """The rows top-down, each one tick, the value axis below."""
    ax.set_yticks(range(len(rows)), list(rows))
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(xlabel)
    ax.set_title(title)


def variant_rows_svg(
    cells: Sequence[StudyCell],
    metric: str,
    xlabel: str,
    title: str,
    name: str,
    label: str,
    names: Mapping[str, str] | None = None,
) -> str | None:
    """One panel: per measured cell, both variants' means of `metric` with the 95% CI of
    each (variant_rows); None without a measured cell."""
    rows = row_labels([c.label for c in measured(cells)])
    if not rows:
        return None
    pairs = variant_samples(cells, metric)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        log_if_wide(ax, variant_rows(ax, pairs, names))
        rows_axis(ax, rows, xlabel, f"{title}\n{CI_BARS}")
        # Outside the axes: inside, it would hide the points of a row.
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

    return render_svg(draw, name, (7.2, 1.3 + rows_height(rows)), label, auto_layout=True)


def cells_cost_svg(
    cells: Sequence[VC],
    metrics: Mapping[str, str],
    title: str,
    name: str,
    xlabel: str,
    row_label: Callable[[VC], str] = lambda cell: cell.label,
) -> str | None:
    """cost_rows_svg of a study's measured cells: per metric (name: its words in the legend)
    a series of the cells' paired estimates."""
    done = measured(cells)
    series = [
        (words, [c.comparisons.get(metric) for c in done]) for metric, words in metrics.items()
    ]
    return cost_rows_svg(row_labels([row_label(c) for c in done]), series, title, name, xlabel)


def side_by_side_svg(
    rows: Sequence[str],
    metrics: Mapping[str, Sequence[tuple[Estimate | None, Estimate | None]]],
    captions: Mapping[str, str],
    labels: Sequence[str],
    title: str,
) -> str | None:
    """`encbench compare` for rows that are not a thread sweep: each row's cost in A and in B,
    the group's first metric."""
    metric = next(iter(metrics), None)
    if metric is None:
        return None
    pairs = metrics[metric]
    series = [(labels[k], [pair[k] for pair in pairs]) for k in (0, 1)]
    return cost_rows_svg(rows, series, f"{title}: {captions[metric]}", f"compare-{title}")
