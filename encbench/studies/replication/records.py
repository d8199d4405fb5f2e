"""The replication study's record of measured runs and the metrics it compares.

replication.jsonl, schema REPLICATION_SCHEMA:
  1 — first version: one line per sysbench run against a 2-node cluster's first node, of
      one variant (plain cluster, or Galera's own TLS) in one round.
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.schema import Metric, RecordedRun, record

REPLICATION_SCHEMA = 1

REPLICATION_METRICS = (
    Metric("tps", "txn/s", "higher_is_better", primary=True, cannot_improve=True),
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("latency_p95_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("link_bytes_per_txn", "bytes", "lower_is_better"),
    Metric("cpu_ms_per_txn", "ms", "lower_is_better", cannot_improve=True),
)


@record
class ReplicationCell:
    """One row of the replication table: a sysbench write workload at a thread count, run
    against the first node of a 2-node cluster."""

    workload: str
    threads: int

    @property
    def label(self) -> str:
        return f"replication {self.workload} {self.threads} thr"

    @property
    def slug(self) -> str:
        return f"{self.workload}-t{self.threads}"


@record
class ReplicationRecord(RecordedRun):
    """One sysbench run against node 1 of one variant's cluster: `plain` (no socket.ssl) or
    `encrypted` (Galera's own TLS, socket.ssl_key/cert/ca), each cluster on its own pair of
    emulated hosts.  Every commit is certified with, and replicated to, node 2 over the link.

    The run ends when node 2 has applied every write set of it (`apply_wait_s` after
    sysbench's end), so the CPU of both nodes (their cgroups) counts all the run's work.
    Bytes are node 2's veth counters over the run, both directions (`link_bytes`): write
    sets one way, certification and acknowledgements the other.  The per-run proof: both
    nodes' socket.ssl as their wsrep_provider_options report it, and a cluster of 2."""

    STUDY: ClassVar[str] = "replication"
    SCHEMA: ClassVar[int] = REPLICATION_SCHEMA
    CELL: ClassVar[type[Any]] = ReplicationCell
    FIGURES: ClassVar[tuple[str, ...]] = ("link_bytes_per_txn", "cpu_ms_per_txn")
    METRICS: ClassVar[tuple[Metric, ...]] = REPLICATION_METRICS

    cell: ReplicationCell
    # round … wall_s: RecordedRun\'s; then this study\'s own
    tps: float
    qps: float
    transactions: int
    ignored_errors: int
    latency_avg_ms: float
    latency_p95_ms: float
    apply_wait_s: float
    link_bytes: int
    node1_cpu_s: float
    node2_cpu_s: float
    # The per-run proof: "YES"/"NO" per node as wsrep_provider_options says socket.ssl is,
    # and wsrep_cluster_size on node 1 when the run ended.
    node1_ssl: str
    node2_ssl: str
    cluster_size: int
    # Both nodes of the other variant's cluster, idle meanwhile: what keeping it up cost.
    idle_cluster_cpu_s: float = 0.0
    raw_output: str = ""

    def __post_init__(self) -> None:
        self.refuse_empty(self.transactions, self.tps, "transactions")

    @property
    def link_bytes_per_txn(self) -> float:
        return self.link_bytes / self.transactions

    @property
    def cpu_ms_per_txn(self) -> float:
        """Both nodes' CPU per transaction: the replica's apply is part of a commit's cost."""
        return (self.node1_cpu_s + self.node2_cpu_s) * 1000 / self.transactions
