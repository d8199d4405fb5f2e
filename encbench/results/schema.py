"""The record of one measured run, as written to runs.jsonl.

Schema versions (RUNS_SCHEMA):
  1 — first version: one line per sysbench run of one variant in one round of one cell;
      client_cpu_s, other_cpu_s and steal_s were added later with default 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

RUNS_SCHEMA = 1
SUMMARY_SCHEMA = 1


@dataclass(frozen=True)
class CellKey:
    """One table row of the report: a workload in a regime at a thread count."""

    workload: str
    regime: str
    threads: int

    @property
    def label(self) -> str:
        return f"{self.workload} {self.regime} {self.threads} thr"

    @property
    def slug(self) -> str:
        return f"{self.workload}-{self.regime}-t{self.threads}"


@dataclass(frozen=True)
class RunRecord:
    cell: CellKey
    round: int
    variant: str
    position: int  # 0 = first of the round, 1 = second: the ABBA order, kept for audit
    session: str
    started_at: str
    wall_s: float
    tps: float
    qps: float
    transactions: int
    ignored_errors: int
    reconnects: int
    latency_avg_ms: float
    latency_p95_ms: float
    latency_max_ms: float
    server_cpu_s: float
    cpu_ms_per_txn: float
    harness_cpu_s: float
    bp_read_requests: int
    bp_reads: int
    pages_read: int
    pages_written: int
    raw_output: str
    # Added within schema 1 (older lines read as 0): sysbench's own CPU, other processes' CPU
    # and stolen CPU during the window: the load this run shared the machine with.
    client_cpu_s: float = 0.0
    other_cpu_s: float = 0.0
    steal_s: float = 0.0

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.transactions <= 0 or self.tps <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"{self.transactions} transactions in {self.wall_s:.1f} s"
            )

    @property
    def hit_ratio(self) -> float:
        if self.bp_read_requests <= 0:
            return 1.0
        return 1.0 - self.bp_reads / self.bp_read_requests

    @property
    def pages_read_per_txn(self) -> float:
        return self.pages_read / self.transactions

    @property
    def pages_written_per_txn(self) -> float:
        return self.pages_written / self.transactions

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = RUNS_SCHEMA
        data["hit_ratio"] = self.hit_ratio
        data["pages_read_per_txn"] = self.pages_read_per_txn
        data["pages_written_per_txn"] = self.pages_written_per_txn
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        if data.get("schema") != RUNS_SCHEMA:
            raise ValueError(f"runs.jsonl schema {data.get('schema')!r} is not {RUNS_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = CellKey(**data["cell"])
        return cls(**fields)
