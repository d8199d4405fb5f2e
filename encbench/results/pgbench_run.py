"""What a run record of pgbench shares, whichever study measured it (PostgreSQL at rest, in
transit): RecordedRun's fields, then pgbench's own figures, the metric compared (TPS) and the
server's CPU per transaction written beside the fields.  A study's record adds its own
fields after these, in the order its results file has always had them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from encbench.results.schema import Metric, RecordedRun, record

PGBENCH_METRICS = (Metric("tps", "txn/s", "higher_is_better", primary=True, cannot_improve=True),)

# The fields PgbenchRun adds to RecordedRun's, named as pgbench's report names them.
PGBENCH_FIELDS = ("tps", "transactions", "failed", "latency_avg_ms")


@record
class PgbenchRun(RecordedRun):
    """One measured pgbench run (or psql's copies, counted as transactions)."""

    STUDY: ClassVar[str]
    FIGURES: ClassVar[tuple[str, ...]] = ("server_cpu_ms_per_txn",)
    METRICS: ClassVar[tuple[Metric, ...]] = PGBENCH_METRICS

    tps: float
    transactions: int
    failed: int
    latency_avg_ms: float
    if TYPE_CHECKING:
        # Each study's record declares it where its results file has always had it.
        server_cpu_s: float

    def __post_init__(self) -> None:
        self.refuse_empty(self.transactions, self.tps, "transactions")

    @property
    def server_cpu_ms_per_txn(self) -> float:
        return 1000.0 * self.server_cpu_s / self.transactions


def pgbench_fields(result: Any) -> dict[str, Any]:
    """PgbenchRun's own fields from what pgbench reported (workloads/pgbench_report.py:
    PgbenchResult): they carry its names."""
    return {name: getattr(result, name) for name in PGBENCH_FIELDS}
