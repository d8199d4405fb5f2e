"""The operations plots (report.html), drawn with the shared helpers of report/plots.py: each
operation's time of both variants, each mean with its 95% CI, one panel per unit (seconds,
and milliseconds per transaction of the foreground load); and the cost of encryption per
operation with its interval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from encbench.report import plots
from encbench.studies.operations.models import OperationCellSummary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Where both sides run encrypted, the row says what each side is (as the table does).
SIDES = {"key-rotation": "plain: not rotating; encrypted: rotating"}
UNIT_WORDS = {"s": "time (s)", "ms/txn": "foreground load's time per transaction (ms)"}


def row_label(cell: OperationCellSummary) -> str:
    side = SIDES.get(cell.operation)
    return f"{cell.label} ({side})" if side else cell.label


def times_svg(cells: Sequence[OperationCellSummary]) -> str | None:
    """Per operation, plain against encrypted; operations of one unit share a panel, so a
    panel never mixes seconds with milliseconds per transaction.  None without a measured
    operation."""
    done = plots.measured(cells)
    if not done:
        return None
    units = list(dict.fromkeys(c.unit for c in done))
    panels = [[c for c in done if c.unit == unit] for unit in units]
    labels = [plots.row_labels([row_label(c) for c in panel]) for panel in panels]
    heights = [plots.rows_height(rows) for rows in labels]

    def draw(fig: Figure) -> None:
        axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
        for ax, unit, panel, rows in zip(axes, units, panels, labels, strict=True):
            drawn = plots.variant_rows(ax, plots.variant_samples(panel, "time"))
            plots.log_if_wide(ax, drawn)
            plots.rows_axis(ax, rows, UNIT_WORDS.get(unit, unit) + " (lower is better)", "")
        axes[0].set_title(f"Operations, plain against encrypted\n{plots.CI_BARS}")
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

    return plots.render_svg(
        draw,
        "operations-times",
        (7.6, 1.1 + 0.6 * len(panels) + sum(heights)),
        "each operation's time, plain against encrypted",
        auto_layout=True,
    )


def cost_svg(cells: Sequence[OperationCellSummary]) -> str | None:
    """The cost of encryption per operation with its 95% CI (> 0: encrypted takes longer)."""
    return plots.cells_cost_svg(
        cells,
        {"time": "time"},
        "Operations: cost of encryption",
        "operations-cost",
        "cost of encryption (%)  > 0: longer",
        row_label,
    )
