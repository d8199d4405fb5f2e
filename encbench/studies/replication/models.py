"""The replication study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.cell_summary import GaleraCell, GaleraPart
from encbench.report.models import Model, Sample


class ReplicationVariant(Model):
    tps: Sample
    latency_avg_ms: Sample
    latency_p95_ms: Sample
    link_bytes_per_txn: Sample  # both directions of node 2's veth
    cpu_ms_per_txn: Sample  # both nodes
    node1_cpu_ms_per_txn: Sample
    node2_cpu_ms_per_txn: Sample
    apply_wait_s: Sample


class ReplicationCellSummary(GaleraCell[ReplicationVariant]):
    workload: str
    threads: int


class ReplicationSummary(GaleraPart[ReplicationCellSummary]):
    # GaleraPart's fields, and nothing more (a docstring would be the schema's description).
    pass
