"""The PostgreSQL in-transit study's part of summary.json, as typed models (summary.py)."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary, StudyPart
from encbench.report.models import Model, Record, Sample


class PgVariant(Model):
    tps: Sample
    latency_avg_ms: Sample
    connection_ms: Sample
    # Over all rounds: the server's CPU (postmaster and backends) per transaction.
    server_cpu_ms_per_txn: float
    transactions: int
    failed: int
    # The per-run proof's counts, summed: the server's log of the benchmark role's
    # connections, and how many of them were TLS.
    connections: int
    tls_connections: int


class PgTransitCellSummary(CellSummary[PgVariant]):
    test: str
    sslmode: str
    key_type: str
    tls_version: str
    clients: int
    # The emulated round-trip time, ms; 0 = loopback.
    rtt_ms: float = 0.0
    proof: dict[str, str] | None = None
    # What each route's capture of the wire showed (plain, encrypted).
    wire: dict[str, str] | None = None

    @property
    def key(self) -> tuple[str, str, str, str, int, float]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (
            self.test,
            self.sslmode,
            self.key_type,
            self.tls_version,
            self.clients,
            self.rtt_ms,
        )


class PgInTransitSummary(StudyPart[PgTransitCellSummary]):
    postgresql_version: str | None
    scale: int
    server_user: str | None
    pki: dict[str, Record] | None
    server_settings: Record | None
    # The copy test's table: its rows and the bytes of one copy's stream.
    bulk_table: Record | None
    # Distances: how the delay was made per round-trip time ("netem" or "relay"), the
    # link's addresses; and the cells not measured, each with why (no namespaces here, or
    # what a target cannot vary).
    delay_method: dict[str, str] | None = None
    link: Record | None = None
    skipped: dict[str, str] | None = None
    # A server encbench did not start (--target): its name, encbench's database on it, the
    # TLS versions it accepts (the cells it could not measure, with why: `skipped`).
    target: Record | None = None
