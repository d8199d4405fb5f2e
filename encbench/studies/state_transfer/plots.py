"""The state-transfer plots (report.html), drawn with the shared helpers of report/plots.py:
per transfer (method and cipher) the time to Synced and the donor's stream rate of both
variants, each mean with its 95% CI, the rate against this machine's measured limits; and
the cost of encryption per transfer with its interval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from encbench.report import plots
from encbench.studies.state_transfer import limits as sst_limits
from encbench.studies.state_transfer.models import SstCellSummary

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# A limit is a mark across its row at its MiB/s; disk and link are the same for every row, so
# their marks line up into one vertical line.  Colours apart from the variants', and each its
# own line style, for grey.
LIMIT_STYLE: dict[str, dict[str, Any]] = {
    sst_limits.DISK_READ: {"color": "#009e73", "linestyle": ":"},
    sst_limits.DISK_WRITE: {"color": "#cc79a7", "linestyle": "-."},
    sst_limits.LINK: {"color": "#e69f00", "linestyle": "--"},
    sst_limits.CIPHER: {"color": "#555555", "linestyle": "-"},
}


def limit_marks(ax: Axes, cells: Sequence[SstCellSummary]) -> list[float]:
    """Each row's limits (both variants': the cipher's is the encrypted side's), as marks
    across the row; returns their MiB/s for the axis' scale."""
    drawn: list[float] = []
    named: set[str] = set()
    for i, cell in enumerate(cells):
        found: dict[str, float] = {}
        for side in cell.limits.values():
            found |= side.limits_mib_per_s
        for resource, style in LIMIT_STYLE.items():
            if resource not in found:
                continue
            ax.vlines(
                found[resource],
                i - 0.5,
                i + 0.5,
                linewidth=1.2,
                # "_": matplotlib leaves the label out of the legend.
                label=f"_{resource}" if resource in named else f"limit: {resource}",
                zorder=1.9,
                **style,
            )
            named.add(resource)
            drawn.append(found[resource])
    return drawn


def times_and_rates_svg(cells: Sequence[SstCellSummary]) -> str | None:
    """Two panels sharing the rows: time to Synced (s) and the donor's stream (MiB/s) of
    both variants, with the measured limits on the second; None without a measured cell."""
    done = plots.measured(cells)
    if not done:
        return None
    rows = plots.row_labels([c.label for c in done])

    def draw(fig: Figure) -> None:
        sync_ax, rate_ax = fig.subplots(1, 2, sharey=True)
        times = plots.variant_rows(sync_ax, plots.variant_samples(done, "sync_s"))
        plots.log_if_wide(sync_ax, times)
        rates = plots.variant_rows(rate_ax, plots.variant_samples(done, "mib_per_s"))
        plots.log_if_wide(rate_ax, rates + limit_marks(rate_ax, done))
        plots.rows_axis(sync_ax, rows, "joiner's start to Synced (s)", "Time to Synced")
        plots.rows_axis(
            rate_ax,
            rows,
            "MiB/s over the donor's stream (higher is better)",
            "Donor's stream rate, against the limits",
        )
        rate_ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle(f"State transfer, plain against encrypted ({plots.CI_BARS})")

    return plots.render_svg(
        draw,
        "sst-times",
        (10.4, 1.4 + plots.rows_height(rows)),
        "time to Synced and the donor's stream rate per transfer, plain against encrypted",
        auto_layout=True,
    )


def cost_svg(cells: Sequence[SstCellSummary]) -> str | None:
    """The cost of encryption per transfer with its 95% CI: to Synced and the stream alone."""
    return plots.cells_cost_svg(
        cells,
        {"sync_s": "to Synced", "transfer_s": "donor's stream"},
        "State transfer: cost of encryption",
        "sst-cost",
        "cost of encryption (%)  > 0: longer",
    )
