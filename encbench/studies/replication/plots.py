"""The replication and rejoin plots (report.html), drawn with the shared helpers of
report/plots.py: per workload the TPS of the plain cluster and the socket.ssl cluster, and per
rejoin (IST, SST) node 2's time to Synced in each, every mean with its 95% CI; and the cost
of Galera's TLS per row with its interval."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report import plots
from encbench.studies.replication.models import RejoinCellSummary, ReplicationCellSummary

# Both clusters are plain servers; only Galera's own traffic differs.
CLUSTERS = {"plain": "plain cluster", "encrypted": "socket.ssl (TLS) cluster"}


def tps_svg(cells: Sequence[ReplicationCellSummary]) -> str | None:
    """Per workload and thread count, the TPS of both clusters; None without a measured cell."""
    return plots.variant_rows_svg(
        cells,
        "tps",
        "throughput (transactions/s, higher is better)",
        "Replication: TPS against node 1",
        "replication-tps",
        "throughput per workload, plain cluster against the TLS cluster",
        CLUSTERS,
    )


def replication_cost_svg(cells: Sequence[ReplicationCellSummary]) -> str | None:
    """The cost of TLS per workload with its 95% CI: TPS and both nodes' CPU per transaction."""
    return plots.cells_cost_svg(
        cells,
        {"tps": "TPS", "cpu_ms_per_txn": "CPU per txn, both nodes"},
        "Replication: cost of Galera's TLS",
        "replication-cost",
        "cost of TLS (%)  > 0: fewer TPS / more CPU",
    )


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
