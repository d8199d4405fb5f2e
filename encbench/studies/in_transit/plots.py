"""The in-transit plots, drawn like report/plots.py's (same style, inline SVG): per test, the
rate of each path with and without encryption; and the share of the connection rate lost to
encryption as the network distance grows (the 2013 study's second table, as lines)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from encbench.report.plots import SIZE, VARIANT_STYLE, bar_axes, render_svg
from encbench.studies.in_transit.models import TransitCellSummary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Cell = TransitCellSummary
KEY_STYLE: tuple[dict[str, Any], ...] = (
    {"marker": "o", "linestyle": "-"},
    {"marker": "s", "linestyle": "--"},
)


def rates_svg(
    cells: Sequence[Cell], title: str, name: str, label: Callable[[Cell], str]
) -> str | None:
    """Horizontal bars, encrypted and plain per path, with the 95% CI of each mean; a log
    axis when the two differ by more than 10× (a TLS handshake against a plain connect)."""
    rows = [c for c in cells if c.rounds and c.variants]
    if not rows:
        return None
    labels = [label(c) for c in rows]
    unit = rows[0].unit

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        spread = []
        for variant, shift in (("encrypted", -0.2), ("plain", 0.2)):
            style = VARIANT_STYLE[variant]
            means: list[float] = []
            errors: list[list[float]] = [[], []]
            for c in rows:
                assert c.variants is not None
                rate = getattr(c.variants, variant).rate
                means.append(rate.mean)
                ci = rate.ci95 or (rate.mean, rate.mean)
                errors[0].append(max(0.0, rate.mean - ci[0]))
                errors[1].append(max(0.0, ci[1] - rate.mean))
            spread += means
            ax.barh(
                [i + shift for i in range(len(rows))],
                means,
                height=0.38,
                xerr=errors,
                color=style["color"] if variant == "encrypted" else "white",
                edgecolor=style["color"],
                hatch="" if variant == "encrypted" else "////",
                ecolor="#333333",
                capsize=2,
                label=style["label"],
            )
        if min(spread) > 0 and max(spread) / min(spread) > 10:
            ax.set_xscale("log")
        bar_axes(ax, labels, f"{unit}, mean with 95% CI (higher is better)", title)
        # Outside the axes: inside, it would hide the bars of the last row.
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

    height = max(SIZE[1], 0.9 + 0.45 * len(rows))
    # `name` (the test) salts the SVG ids: two plots may share a title.
    return render_svg(draw, f"transit-{name}", (6.4, height), title, auto_layout=True)


def distance_svg(cells: Sequence[Cell], name: Callable[[Cell], str]) -> str | None:
    """% of the connection rate lost to encryption against the round-trip time, one line per
    path (`name`: a key type and suite of TLS, or a tunnel) and thread count, with the paired
    95% CI as error bars.  Below zero where the encrypted path was the faster (a tunnel's
    channel crosses the link without a TCP handshake of its own)."""
    conn = [c for c in cells if c.test == "connect" and c.rounds and "rate" in c.comparisons]
    if len({c.rtt_ms for c in conn}) < 2:
        return None
    series: dict[tuple[str, int], list[Cell]] = {}
    for c in conn:
        series.setdefault((name(c), c.threads), []).append(c)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        lowest = 0.0
        for i, ((path, threads), group) in enumerate(series.items()):
            group = sorted(group, key=lambda c: c.rtt_ms)
            xs = [c.rtt_ms for c in group]
            comps = [c.comparisons["rate"] for c in group]
            ys = [comp.overhead_pct for comp in comps]
            ci = [comp.overhead_ci_pct or (y, y) for comp, y in zip(comps, ys, strict=True)]
            lowest = min(lowest, *(lo for lo, _ in ci))
            err = [[y - lo for y, (lo, _) in zip(ys, ci, strict=True)]]
            err.append([hi - y for y, (_, hi) in zip(ys, ci, strict=True)])
            ax.errorbar(
                xs, ys, yerr=err, capsize=2, label=f"{path}, {threads} thr", **KEY_STYLE[i % 2]
            )
        ax.set_xlabel("round-trip time (ms)")
        ax.set_ylabel("connection rate lost to encryption (%)")
        ax.set_ylim(min(0.0, lowest * 1.1), 100)
        ax.set_title("The cost of encryption at a distance")
        ax.legend(fontsize="small")

    return render_svg(draw, "transit-distance", SIZE, "connection rate lost by distance")
