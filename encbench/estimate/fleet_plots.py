"""The fleet page's plots, drawn as the study reports' are (report/plots.py: matplotlib into
inline `<svg>`, their style and colours): the fleet's extra CPU over the window, the
instances that would pay most, and how the cost spreads over all instances.

Each stays readable at a thousand instances: the bars are the TOP_BARS most expensive and
one bar for all the rest together; the distribution is an ECDF and a cumulative share,
whose size does not grow with the fleet's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from encbench.estimate import model
from encbench.estimate.fleet import FleetTotal, InstanceEstimate
from encbench.estimate.fleet_series import FleetSeries
from encbench.estimate.model import Figure as Interval
from encbench.report.plots import SIDE_STYLE, VARIANT_STYLE, render_svg

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TOP_BARS = 20
CORES = "extra CPU (cores)"
ZERO = Interval(value=0.0, low=0.0, high=0.0)  # an instance with no cause estimated
MEAN_STYLE = SIDE_STYLE[0]
PEAK_STYLE = VARIANT_STYLE["encrypted"]


def span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:g} s"


def _with_gaps(
    series: FleetSeries,
) -> tuple[list[datetime], list[float], list[float], list[float]]:
    """The points as datetimes, with a NaN where steps are missing, so that a gap (no
    exporter reported) is drawn as a gap, not as a line across it."""
    times: list[datetime] = []
    cores: list[float] = []
    low: list[float] = []
    high: list[float] = []
    previous: float | None = None
    for t, c, lo, hi in zip(series.times, series.cores, series.low, series.high, strict=True):
        if previous is not None and t - previous > 1.5 * series.step_s:
            times.append(datetime.fromtimestamp((t + previous) / 2, UTC))
            cores.append(math.nan)
            low.append(math.nan)
            high.append(math.nan)
        times.append(datetime.fromtimestamp(t, UTC))
        cores.append(c)
        low.append(lo)
        high.append(hi)
        previous = t
    return times, cores, low, high


def series_svg(series: FleetSeries, fleet: FleetTotal) -> str | None:
    """The fleet's extra cores at every step, the unit's interval as a band, and the
    window's mean (the instances' means added) as a line."""
    if not series.times:
        return None
    times, cores, low, high = _with_gaps(series)

    def draw(fig: Figure) -> None:
        import numpy as np
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        ax = fig.add_subplot()
        color = MEAN_STYLE["color"]
        # datetime64: what matplotlib's date axis takes and its type hints accept.
        when = np.array([t.replace(tzinfo=None) for t in times], dtype="datetime64[s]")
        ax.fill_between(
            when, low, high, color=color, alpha=0.18, linewidth=0, label="the unit cost's interval"
        )
        ax.plot(when, cores, color=color, linewidth=1.0, label="the fleet, each step")
        if fleet.mean is not None:
            ax.axhline(
                fleet.mean.value,
                color="#222222",
                linestyle="--",
                linewidth=1.0,
                label="the window's mean",
            )
        # Dates at a step that suits the window (hours for a day, days for a week), each
        # label no longer than it must be.
        locator = AutoDateLocator()  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
        ax.set_ylim(bottom=0)
        ax.set_ylabel(CORES)
        ax.set_xlabel("UTC")
        ax.set_title(
            f"The fleet's extra CPU over the window, per {span(series.step_s)} step "
            f"({fleet.instances} instances)"
        )
        fig.legend(loc="outside lower center", ncols=3)

    return render_svg(
        draw, "fleet-series", (9.6, 3.5), "the fleet's extra CPU over time", auto_layout=True
    )


def _total(e: InstanceEstimate, at: str) -> Interval | None:
    return (e.mean if at == "mean" else e.peak).total.cores


def ranked_svg(ranked: Sequence[InstanceEstimate]) -> str | None:
    """The TOP_BARS instances that would pay most, at the mean with its interval and at the
    peak; the rest added up in one hatched bar.  The axis is the top instances': the rest's
    sum, many times one instance's at a thousand, would flatten them; where it passes the
    axis its bar is cut there and its figure written on it."""
    if not ranked:
        return None
    top = list(ranked[:TOP_BARS])
    rest = list(ranked[TOP_BARS:])
    names = [e.instance for e in top]
    means = [m or ZERO for m in (_total(e, "mean") for e in top)]
    peaks = [p or ZERO for p in (_total(e, "peak") for e in top)]
    widest = max(max(m.high for m in means), max(p.value for p in peaks))
    limit = 1.2 * widest if widest > 0 else 1.0
    others = model.added([_total(e, "mean") for e in rest])

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        ys = list(range(len(names)))
        bars = ax.barh(
            ys,
            [m.value for m in means],
            height=0.6,
            color=MEAN_STYLE["color"],
            alpha=0.85,
            xerr=[[m.value - m.low for m in means], [m.high - m.value for m in means]],
            error_kw={"capsize": 2, "linewidth": 0.8},
            label="at the mean (line: its interval)",
        )
        ax.bar_label(bars, labels=[_short(m.value) for m in means], padding=3, fontsize=7)
        ax.plot(
            [p.value for p in peaks],
            ys,
            linestyle="none",
            marker="D",
            markersize=4,
            color=PEAK_STYLE["color"],
            label="at its peak",
        )
        labels = list(names)
        if others is not None:
            y = len(names)
            labels.append(f"the other {len(rest)}, added")
            ax.barh([y], [min(others.value, limit)], height=0.6, color="white",
                    edgecolor=MEAN_STYLE["color"], hatch="////")  # fmt: skip
            text = f"{_short(others.value)} ({_short(others.low)}–{_short(others.high)})" + (
                " → off the axis" if others.value > limit else ""
            )
            inside = others.value > 0.6 * limit
            ax.text(
                limit * 0.98 if inside else others.value + 0.02 * limit, y, text,
                ha="right" if inside else "left", va="center", fontsize=7,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
            )  # fmt: skip
        ax.set_yticks(range(len(labels)), labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)  # the most expensive at the top
        ax.set_xlim(0, limit)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(CORES)
        ax.set_title(f"The {len(top)} instances that would pay most")
        # Below the axes: inside, it would cover a bar whatever the fleet.
        fig.legend(loc="outside lower center", ncols=2)

    height = 1.5 + 0.2 * (len(names) + (1 if rest else 0))
    return render_svg(
        draw, "fleet-ranked", (6.4, height), "the instances that would pay most", auto_layout=True
    )


_PLAIN = "{x:,g}"  # plain numbers on a log axis: 0.001 and 1,000 rather than 10⁻³ and 10³


def _log_if_wide(ax: Axes, values: Sequence[float]) -> None:
    """A log axis where the instances' values span more than 100× (a fleet's quietest and
    busiest), labelled at each decade only: a decade's 2 and 5 overlap at these widths."""
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 100:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_PLAIN)


def _short(value: float) -> str:
    return "0" if value <= 0 else f"{value:.3g}"


def distribution_svg(ranked: Sequence[InstanceEstimate]) -> str | None:
    """Over every instance: the ECDF of its extra cores (at the mean and at its peak), and
    the share of the fleet's total the most expensive instances hold."""
    means = sorted(m.value for e in ranked if (m := _total(e, "mean")) is not None)
    if not means:
        return None
    peaks = sorted(p.value for e in ranked if (p := _total(e, "peak")) is not None)
    total = sum(means)

    def draw(fig: Figure) -> None:
        from matplotlib.ticker import MaxNLocator

        ecdf, share = fig.subplots(1, 2)
        for values, style, label in (
            (means, MEAN_STYLE, "at the mean"),
            (peaks, PEAK_STYLE, "at its peak"),
        ):
            positive = [v for v in values if v > 0]
            if not positive:
                continue
            n = len(values)
            zeros = n - len(positive)
            # From the share at 0 (where a log axis cannot go) up, a step at each instance.
            ys = [(zeros + k) / n for k in range(len(positive) + 1)]
            ecdf.step(
                [positive[0], *positive],
                ys,
                where="post",
                color=style["color"],
                linestyle=style["linestyle"],
                label=label,
            )
        _log_if_wide(ecdf, means + peaks)
        ecdf.set_ylim(0, 1.02)
        ecdf.set_xlabel(CORES + ", per instance")
        ecdf.set_ylabel("share of the instances at or below")
        ecdf.set_title(f"Per instance, over all {len(means)}")
        ecdf.legend(loc="lower right")
        ranked_down = sorted(means, reverse=True)
        running, acc = [], 0.0
        for v in ranked_down:
            acc += v
            running.append(100.0 * acc / total if total > 0 else 0.0)
        xs = list(range(1, len(ranked_down) + 1))
        share.plot(xs, running, color=MEAN_STYLE["color"], linewidth=1.2)
        if len(xs) > 50:
            share.set_xscale("log")
            share.xaxis.set_major_formatter(_PLAIN)
        else:
            share.xaxis.set_major_locator(MaxNLocator(integer=True))
        share.set_ylim(0, 102)
        share.set_xlabel("the most expensive instances, how many")
        share.set_ylabel("of the fleet's extra CPU at the mean (%)")
        share.set_title("How much the most expensive pay")

    return render_svg(
        draw,
        "fleet-distribution",
        (9.6, 3.1),
        "the distribution of the extra CPU over the instances",
        auto_layout=True,
    )
