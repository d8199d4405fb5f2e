"""The in-transit study's part of summary.json, as typed models (built in summary.py)."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary, StudyPart
from encbench.report.models import Model, Record, Spread
from encbench.servers.mariadb import installs


class Rate(Model):
    mean: float
    stdev: float
    ci95: tuple[float, float] | None


class PerEvent(Model):
    mean: float
    total_s: float | None = None


class TransitVariant(Model):
    rate: Rate
    latency_avg_ms: Spread
    # Totals over all rounds, not a mean of per-run values: at a distance a run holds a
    # handful of connections and the CPU clock ticks in 10 ms steps.
    server_cpu_ms_per_event: PerEvent
    tunnel_cpu_ms_per_event: PerEvent
    encryption_cpu_ms_per_event: Spread | None  # None: the server's CPU was not measured
    tls_handshakes: int
    tunnel_handshakes: int
    tunnel_resumed: int
    session_cache_hits: int
    events: int
    errors: int
    # A server that logs each connection (PostgreSQL): the run's connections it logged, and
    # the client's time to connect (pgbench's); None where not counted.
    connections: int | None = None
    connection_ms: Spread | None = None


class TransitCellSummary(CellSummary[TransitVariant]):
    test: str
    method: str
    key_type: str
    cipher: str
    rtt_ms: float
    threads: int
    resume: bool
    unit: str
    proof: dict[str, str] | None = None
    # PostgreSQL's cells (records.TransitCell): their kind, sslmode and TLS version, and
    # what each route's capture of the wire showed (plain, encrypted).
    kind: str = "mariadb"
    sslmode: str = ""
    tls_version: str = ""
    wire: dict[str, str] | None = None

    @property
    def key(self) -> tuple[str, str, str, str, float, int, bool, str, str, str]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (
            self.test,
            self.method,
            self.key_type,
            self.cipher,
            self.rtt_ms,
            self.threads,
            self.resume,
            self.kind,
            self.sslmode,
            self.tls_version,
        )


class PgServer(Model):
    """What the run recorded of PostgreSQL's server in transit."""

    postgresql_version: str | None = None
    scale: int
    server_user: str | None = None
    pki: dict[str, Record] | None = None
    server_settings: Record | None = None
    # The copy test's table: its rows and the bytes of one copy's stream.
    bulk_table: Record | None = None
    # How the delay was made per round-trip time ("netem" or "relay").
    delay_method: dict[str, str] | None = None
    # Its cells not measured, each with why (no namespaces here, what a target cannot vary).
    skipped: dict[str, str] | None = None
    # The emulated link its cells at a distance crossed (its hosts' addresses).
    link: Record | None = None
    # A server encbench did not start (--target): its name, encbench's database on it, the
    # TLS versions it accepts.
    target: Record | None = None


class InTransitSummary(StudyPart[TransitCellSummary]):
    tls_version: str
    mariadb_version: str | None
    # The private root its server ran from (servers/mariadb/installs.py); None: this host's MariaDB.
    install: dict[str, str] | None = None
    pki: dict[str, Record] | None
    notes: dict[str, str] | None
    server_options: Record | None
    delay_method: dict[str, str] | None
    link: Record | None
    bulk_table: Record | None
    session_cache_hits: int
    tls_handshakes: int
    # A user's server ([target]): what the run read of it, and how its CPU was (not) read.
    target: Record | None = None
    cpu_measurement: str | None = None
    # A sandbox's family as it was made (MySQL); None: MariaDB, or before it was recorded.
    server_family: str | None = None
    # PostgreSQL's server, where its cells were measured.
    postgresql: PgServer | None = None

    @property
    def family(self) -> str:
        """The server's family as its makers name it: MariaDB, or a target's or an
        install's own (MySQL)."""
        return installs.recorded_family(
            {"target": self.target, "install": self.install, "family": self.server_family}
        )
