"""The replication study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.bound import Bounded
from encbench.report.models import Differences, Estimate, Harness, Model, Pair, Record, Sample


class ReplicationVariant(Model):
    tps: Sample
    latency_avg_ms: Sample
    latency_p95_ms: Sample
    link_bytes_per_txn: Sample  # both directions of node 2's veth
    cpu_ms_per_txn: Sample  # both nodes
    node1_cpu_ms_per_txn: Sample
    node2_cpu_ms_per_txn: Sample
    apply_wait_s: Sample


class ReplicationCellSummary(Bounded):
    workload: str
    threads: int
    label: str
    rounds: int
    rounds_rejected: int
    measured_s: float
    status: str
    variants: Pair[ReplicationVariant] | None = None
    comparisons: dict[str, Estimate] = {}
    other_load_pct_of_core: float | None = None
    # The per-cell proof on the wire, per cluster (replication.json's "proofs").
    proof: Record | None = None


class ReplicationSummary(Model):
    target_halfwidth_pct: float
    mariadb_version: str | None
    galera_version: str | None
    data: Record | None
    link: Record | None
    key_type: str | None
    certificate: str | None
    harness: Harness
    cells: list[ReplicationCellSummary]
    differences: Differences | None = None
