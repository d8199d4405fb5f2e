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

    @property
    def key(self) -> tuple[str, str, str, str, float, int, bool]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (
            self.test,
            self.method,
            self.key_type,
            self.cipher,
            self.rtt_ms,
            self.threads,
            self.resume,
        )


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

    @property
    def family(self) -> str:
        """The server's family as its makers name it: MariaDB, or a target's or an
        install's own (MySQL)."""
        return installs.recorded_family(
            {"target": self.target, "install": self.install, "family": self.server_family}
        )
