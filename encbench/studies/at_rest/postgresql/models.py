"""The PostgreSQL at-rest study's part of summary.json, as typed models (summary.py)."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary, StudyPart
from encbench.report.models import Model, Record, Sample


class PgAtRestVariant(Model):
    tps: Sample
    latency_avg_ms: Sample
    # Over all rounds: the server's CPU (postmaster and backends) per transaction.
    server_cpu_ms_per_txn: float
    transactions: int
    failed: int
    # The server's memory group at the end of each run: its page cache (the cache less
    # shared memory), the mean and the largest, and as a share of the data.
    page_cache_mib: float
    page_cache_max_mib: float
    cache_share_of_data: float
    memory_limit_mib: float
    # A write run's CHECKPOINT inside its window, the mean in seconds (None: a read cell).
    checkpoint_s: float | None = None


class PgAtRestCellSummary(CellSummary[PgAtRestVariant]):
    regime: str
    workload: str
    clients: int

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (self.regime, self.workload, self.clients)


class PgAtRestSummary(StudyPart[PgAtRestCellSummary]):
    postgresql_version: str | None
    scale: int
    server_user: str | None
    # pg_database_size of each server's benchmark database after loading.
    data_bytes: dict[str, int] | None
    # Per regime: shared_buffers, the memory groups' limit, and per server its confinement,
    # the blocks read in ahead (in memory) and its page cache at the start.
    regimes: dict[str, Record] | None
    # How the images were made, the kernel's cipher for the policy, the proof below the
    # filesystem and how the key left.
    filesystem: Record | None
