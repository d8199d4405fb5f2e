"""The at-rest study's plots (report.html): both variants against the thread sweep with
95% CIs of their means, and the cost of encryption with its interval; drawn with the shared
helpers of report/plots.py."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from encbench import stats
from encbench.report import plots
from encbench.studies.at_rest.models import AtRestCell

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def measured(cells: Sequence[AtRestCell]) -> list[AtRestCell]:
    return sorted((c for c in cells if c.rounds and c.variants), key=lambda c: c.threads)


def spread_of(cell: AtRestCell, variant: str, metric: str) -> tuple[float, float]:
    assert cell.variants is not None
    spread = getattr(getattr(cell.variants, variant), metric)
    return float(spread.mean), float(spread.stdev)


def variant_lines(ax: Axes, cells: list[AtRestCell], metric: str) -> None:
    threads = [c.threads for c in cells]
    for variant in ("encrypted", "plain"):
        style = plots.VARIANT_STYLE[variant]
        spreads = [spread_of(c, variant, metric) for c in cells]
        means = [m for m, _ in spreads]
        bands = [stats.mean_ci(m, sd, c.rounds) for (m, sd), c in zip(spreads, cells, strict=True)]
        ax.plot(threads, means, **style)
        if len(cells) > 1:
            # A cell of one round has no CI: the band breaks there (NaN) rather than lying.
            low = [b[0] if b else math.nan for b in bands]
            high = [b[1] if b else math.nan for b in bands]
            ax.fill_between(threads, low, high, color=style["color"], alpha=0.18, linewidth=0)
        elif bands[0] is not None:
            ax.errorbar(
                threads,
                means,
                yerr=[[means[0] - bands[0][0]], [bands[0][1] - means[0]]],
                color=style["color"],
                capsize=3,
                linestyle="none",
            )
    ax.set_ylim(bottom=0)
    ax.legend(loc="best")
    plots.threads_axis(ax, threads)


def variant_metric_svg(
    cells: Sequence[AtRestCell], metric: str, ylabel: str, heading: str, slug: str
) -> str | None:
    """One metric of both variants against threads, each with the 95% CI of its mean."""
    done = measured(cells)
    if not done or any(getattr(c.variants.plain, metric) is None for c in done if c.variants):
        return None  # not measured (a target's server CPU): no plot rather than zeros

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        variant_lines(ax, done, metric)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{heading}\nband: 95% CI of the mean")

    return plots.render_svg(draw, slug, plots.SIZE, f"{heading.lower()} against threads")


def throughput_svg(cells: Sequence[AtRestCell], title: str) -> str | None:
    """TPS against threads for both variants, with the 95% CI of each variant's mean."""
    return variant_metric_svg(
        cells, "tps", "throughput (transactions/s)", f"Throughput, {title}", f"tps-{title}"
    )


def cpu_per_txn_svg(cells: Sequence[AtRestCell], title: str) -> str | None:
    """Server CPU milliseconds per transaction against threads for both variants."""
    return variant_metric_svg(
        cells,
        "cpu_ms_per_txn",
        "server CPU per transaction (ms)",
        f"Server CPU per transaction, {title}",
        f"cpu-{title}",
    )


def latency_svg(cells: Sequence[AtRestCell], title: str) -> str | None:
    """Average latency against threads for both variants (the seed's latency figure)."""
    return variant_metric_svg(
        cells,
        "latency_avg_ms",
        "average latency (ms)",
        f"Average latency, {title}",
        f"latency-{title}",
    )


def overhead_svg(cells: Sequence[AtRestCell], title: str) -> str | None:
    """The cost of encryption in % (> 0: encrypted is slower, or spends more server CPU per
    transaction) against threads, with 95% CIs, for TPS and CPU per transaction."""
    done = measured(cells)
    if not done:
        return None

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        threads = [c.threads for c in done]
        for k, metric in enumerate(plots.METRIC_STYLE):
            if not all(metric in c.comparisons for c in done):
                continue  # not measured (a target's server CPU): no points rather than zeros
            comps = [c.comparisons[metric] for c in done]
            plots.cost_points(
                ax,
                plots.dodge(threads, k, len(plots.METRIC_STYLE)),
                comps,
                plots.METRIC_STYLE[metric],
            )
        plots.zero_line(ax)
        plots.threads_axis(ax, threads)
        ax.set_ylabel(plots.COST_LABEL)
        ax.set_title(f"Cost of encryption, {title}\nbars: 95% CI; filled: CI excludes 0")
        ax.legend(loc="best")

    return plots.render_svg(
        draw, f"cost-{title}", plots.SIZE, f"cost of encryption against threads, {title}"
    )


def series_svg(cells: Sequence[AtRestCell], title: str) -> str | None:
    """Each variant's TPS second by second over its counted rounds (the steady design's
    per-second reports), one panel per thread count: stalls show as drops to the floor."""
    done = [c for c in measured(cells) if c.series]
    if not done:
        return None

    def draw(fig: Figure) -> None:
        axes = fig.subplots(len(done), 1, squeeze=False)[:, 0]
        for ax, cell in zip(axes, done, strict=True):
            assert cell.series is not None
            for variant in ("encrypted", "plain"):
                style = plots.VARIANT_STYLE[variant]
                values = cell.series.get(variant, [])
                ax.plot(
                    range(1, len(values) + 1),
                    values,
                    color=style["color"],
                    linestyle=style["linestyle"],
                    linewidth=0.8,
                    label=style["label"],
                )
            ax.set_ylim(bottom=0)
            ax.set_ylabel(f"TPS, {cell.threads} thr")
        axes[-1].set_xlabel("second of measured load (rounds in order)")
        axes[0].set_title(f"Throughput second by second, {title}")
        axes[0].legend(loc="lower right")

    width, height = plots.SIZE
    return plots.render_svg(
        draw,
        f"series-{title}",
        (width * 1.6, max(height * 0.6 * len(done), height)),
        f"per-second throughput of both variants, {title}",
        auto_layout=True,
    )
