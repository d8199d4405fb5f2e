"""The PostgreSQL at-rest study's records of measured runs and the metrics it compares.

pg-at-rest.jsonl, schema PG_AT_REST_SCHEMA:
  1 — first version.
  2 — checkpoint_s: a write run's window includes a CHECKPOINT; later (optional, absent in
      older runs) blocks_read, blocks_written, wal_bytes over the run (servers/pg_counters).
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.pgbench_run import PgbenchRun
from encbench.results.schema import record

PG_AT_REST_SCHEMA = 2


@record
class PgAtRestCell:
    """One row of the PostgreSQL at-rest tables: a pgbench workload at one client count, in
    one memory regime; its plain side's data directory on a plain ext4 image, its encrypted
    side's on an fscrypt-encrypted one."""

    regime: str  # in-memory | io-bound
    workload: str  # tpcb_like | select_only
    clients: int

    @property
    def label(self) -> str:
        return f"{self.regime} {self.workload} {self.clients} cl"

    @property
    def slug(self) -> str:
        return f"{self.regime}-{self.workload}-c{self.clients}"


@record
class PgAtRestRecord(PgbenchRun):
    """One measured run of one variant in one round of a PostgreSQL at-rest cell: its `tps`
    pgbench's own (without initial connection time)."""

    STUDY: ClassVar[str] = "pg-at-rest"
    SCHEMA: ClassVar[int] = PG_AT_REST_SCHEMA
    CELL: ClassVar[type[Any]] = PgAtRestCell

    cell: PgAtRestCell
    # round … latency_avg_ms: PgbenchRun's; then this study's own
    server_cpu_s: float  # the postmaster and every backend, live or reaped
    client_cpu_s: float
    # The server's memory group at the run's end (servers/shapes.GroupMemory): its cache as
    # the kernel counts it, the shared memory in it, and the page cache (the difference);
    # its limit; and the data's size (pg_database_size after loading).
    group_cache_bytes: int
    group_shmem_bytes: int
    page_cache_bytes: int
    memory_limit_bytes: int
    data_bytes: int
    # The device mounted under the server's directory during the run (its image's loop).
    device: str
    raw_output: str
    # Kernel threads' CPU over the window (engine/clocks.py): the loop device's and
    # fscrypt's work for the run, counted as the run's rather than as other load.
    kernel_cpu_s: float | None = None
    # A write run's CHECKPOINT inside its window (seconds): the pages it dirtied written, and
    # on the fs side encrypted, charged to it; None for a read run (schema 1: none at all).
    checkpoint_s: float | None = None
    # The server's own counters over the run (servers/postgresql/counters.py): blocks read from the
    # filesystem, blocks written to it, WAL bytes written; None in runs recorded before them.
    blocks_read: int | None = None
    blocks_written: int | None = None
    wal_bytes: int | None = None

    @property
    def cache_share_of_data(self) -> float:
        """What fraction of the data the group's page cache held at the run's end."""
        return self.page_cache_bytes / self.data_bytes if self.data_bytes else 0.0
