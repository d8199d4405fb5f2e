"""The replication plots (report.html), drawn with the shared helpers of report/plots.py:
per workload the TPS of the plain cluster and the socket.ssl cluster, every mean with its 95%
CI; and the cost of Galera's TLS per row with its interval."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.engine.galera_pair_study import CLUSTERS
from encbench.report import plots
from encbench.studies.replication.models import ReplicationCellSummary


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
