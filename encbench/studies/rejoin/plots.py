"""The rejoin plots (report.html), drawn with the shared helpers of report/plots.py: per
rejoin (IST, SST) node 2's time to Synced in the plain cluster and the socket.ssl cluster,
every mean with its 95% CI; and the cost of Galera's TLS per row with its interval."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.engine.galera_pair_study import CLUSTERS
from encbench.report import plots
from encbench.studies.rejoin.models import RejoinCellSummary


def rejoin_svg(cells: Sequence[RejoinCellSummary]) -> str | None:
    """Per transfer (IST, SST), node 2's time to Synced in both clusters; None without a
    measured cell."""
    return plots.variant_rows_svg(
        cells,
        "sync_s",
        "node 2's start to Synced (s, lower is better)",
        "Rejoin: time to Synced",
        "rejoin-sync",
        "time to Synced per transfer, plain cluster against the TLS cluster",
        CLUSTERS,
    )


def rejoin_cost_svg(cells: Sequence[RejoinCellSummary]) -> str | None:
    """The cost of TLS per transfer with its 95% CI (> 0: longer to Synced)."""
    return plots.cells_cost_svg(
        cells,
        {"sync_s": "to Synced"},
        "Rejoin: cost of Galera's TLS",
        "rejoin-cost",
        "cost of TLS (%)  > 0: longer",
    )
