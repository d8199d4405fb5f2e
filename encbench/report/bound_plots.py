"""What bound each cell, as a plot along the thread sweep (report.html): the machine's CPU
as a share of its cores and the data device's busy time, both variants, with the 90% line
at which report/bound.py calls a cell bound by it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from encbench.report import plots
from encbench.report.bound import CPU_FULL, DISK_FULL_PCT, BoundBy

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RESOURCE_STYLE = {
    "cpu": {"color": "#009e73", "label": "CPU busy (% of cores)"},
    "disk": {"color": "#cc79a7", "label": "disk busy (%util)"},
}


def bound_svg(points: Sequence[tuple[int, BoundBy]], title: str, slug: str) -> str | None:
    """CPU and disk busy against threads, encrypted solid and plain dashed; None with fewer
    than one cell that recorded them."""
    if not points:
        return None
    points = sorted(points, key=lambda p: p[0])
    threads = [t for t, _ in points]
    has_disk = any(b.variants.encrypted.disk_busy_pct is not None for _, b in points)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        for variant, line in (("encrypted", "-"), ("plain", "--")):
            name = plots.VARIANT_STYLE[variant]["label"]
            sides = [getattr(b.variants, variant) for _, b in points]
            cpu = [100.0 * s.cores_busy / s.cores for s in sides]
            ax.plot(threads, cpu, linestyle=line, marker="o", **_style("cpu", name))
            if has_disk:
                disk = [s.disk_busy_pct if s.disk_busy_pct is not None else 0.0 for s in sides]
                ax.plot(threads, disk, linestyle=line, marker="s", **_style("disk", name))
        ax.axhline(100.0 * CPU_FULL, color="black", linewidth=0.8, linestyle=":", zorder=1.8)
        ax.set_ylim(0, 105)
        ax.set_ylabel("busy (%)")
        ax.legend(loc="lower right", fontsize=7)
        plots.threads_axis(ax, threads)
        ax.set_title(f"What bound it, {title}\ndotted: {DISK_FULL_PCT:g}% = bound")

    return plots.render_svg(draw, f"bound-{slug}", plots.SIZE, f"what bound {title}")


def _style(resource: str, variant_label: str) -> dict[str, Any]:
    style = RESOURCE_STYLE[resource]
    return {"color": style["color"], "label": f"{style['label']}, {variant_label}"}
