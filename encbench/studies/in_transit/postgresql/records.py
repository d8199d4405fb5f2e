"""The PostgreSQL in-transit study's records of measured runs and the metrics it compares.

pg-in-transit.jsonl, schema PG_TRANSIT_SCHEMA:
  1 — first version.  Later, with default 0: the cell's `rtt_ms` (its emulated round-trip
      time; 0 = loopback, as every cell was before).
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.pgbench_run import PgbenchRun
from encbench.results.schema import record

PG_TRANSIT_SCHEMA = 1


@record
class PgTransitCell:
    """One row of the PostgreSQL in-transit tables: a pgbench test at one client count,
    whose TLS side connects with `sslmode` to a server with a `key_type` certificate,
    limited to `tls_version`, from `rtt_ms` away (0: loopback; else across an emulated
    link from a network namespace of its own).  Its plain side connects to the same server
    with sslmode=disable."""

    test: str  # connect_select1 | connect_select_only | select_only | copy
    sslmode: str  # require | verify-full
    key_type: str
    tls_version: str  # TLSv1.2 | TLSv1.3
    clients: int
    rtt_ms: float = 0.0

    @property
    def label(self) -> str:
        far = f" RTT {self.rtt_ms:g} ms" if self.rtt_ms else ""
        return (
            f"{self.test} {self.sslmode} {self.key_type} {self.tls_version}{far} {self.clients} cl"
        )

    @property
    def slug(self) -> str:
        # A loopback cell keeps the slug it had before distances existed (--resume).
        far = f"-rtt{self.rtt_ms:g}" if self.rtt_ms else ""
        return (
            f"{self.test}-{self.sslmode}-{self.key_type}-{self.tls_version.lower()}{far}"
            f"-c{self.clients}"
        )

    @property
    def connects(self) -> bool:
        """Whether every transaction opens a connection of its own (pgbench -C; a copy)."""
        return self.test.startswith("connect_") or self.test == "copy"


@record
class PgTransitRecord(PgbenchRun):
    """One measured run of one variant in one round of a PostgreSQL in-transit cell: its
    `tps` pgbench's own figure (with -C: including reconnection times); a copy's, copies per
    second."""

    STUDY: ClassVar[str] = "pg-in-transit"
    SCHEMA: ClassVar[int] = PG_TRANSIT_SCHEMA
    CELL: ClassVar[type[Any]] = PgTransitCell

    cell: PgTransitCell
    # round … latency_avg_ms: PgbenchRun's; then this study's own
    # pgbench's average connection time (-C) or its initial connection time (without); 0 for
    # a copy (psql does not say).
    connection_ms: float
    server_cpu_s: float  # the postmaster and every backend, live or reaped
    client_cpu_s: float
    # The per-run proof, from the server's own log of each connection of the benchmark
    # role in the run: how many, how many were TLS, and what TLS ("" for none).
    connections: int
    tls_connections: int
    negotiated: str
    raw_output: str
