"""What the in-transit study asks of a kind's server (a `Side`): the study's runner
(study.py) opens the hosts, keeps the record file, times each run's window and writes its
record; the kind's side starts and provisions its server (or reads the user's), sets its
TLS for a cell, opens and proves the cell's two routes, runs its client over one, and
counts what the server saw of the run (its proof).  MariaDB's and MySQL's side is
mariadb_server.py (a target's: target.py), PostgreSQL's postgresql_server.py (a target's:
postgresql_target.py)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench.engine.clocks import Clocks, Window
from encbench.engine.progress import RunProgress
from encbench.engine.study import Run
from encbench.net.distance import Hosts
from encbench.profiles.profile import Profile
from encbench.results.schema import Usage
from encbench.results.store import ResultStore
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.study_record import Book


@dataclass(frozen=True)
class ClientRun:
    """What one run of a cell's client reports, in the cell's unit: each field is the run
    record's of the same name (TransitRecord), which takes them as they are."""

    events: int  # connections, transactions, or MiB (bulk, dump); copies
    rate: float
    bytes: int
    latency_avg_ms: float
    latency_p95_ms: float | None  # None: the client does not give one (pgbench)
    errors: int  # errors the client ignored and went on after (sysbench), or failed (pgbench)
    connection_ms: float | None = None  # pgbench's time to connect; None: not given


@dataclass(frozen=True)
class RunProof:
    """What the server (and a tunnel) counted of one run: the record's proof fields."""

    tls_handshakes: int
    session_cache_hits: int = 0
    tunnel_cpu_s: float = 0.0
    tunnel_handshakes: int = 0
    tunnel_resumed: int = 0
    # A server that logs each connection (PostgreSQL): how many, and what TLS they
    # negotiated; None and "" where the proof is the server's counters.
    connections: int | None = None
    negotiated: str = ""


@dataclass(frozen=True)
class SideContext:
    """What a side is made with: the run's store, profile and progress, its part of the
    record file, and the run's private directory (keys, passwords, certificates)."""

    store: ResultStore
    profile: Profile
    progress: RunProgress
    book: Book
    private: Path


class Side(Protocol):
    """A kind's server in the in-transit study."""

    def setup(self, hosts: Hosts, todo: Sequence[TransitCell]) -> AbstractContextManager[Any]:
        """Its server started and provisioned on the study's hosts for the cells `todo`,
        stopped and removed at the end (a target's: checked, its database dropped)."""
        ...

    def open_cell(self, cell: TransitCell) -> AbstractContextManager[Any]:
        """The server's TLS set for the cell, its two routes opened and each proven."""
        ...

    def warm_up(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> None: ...

    def before_run(self, run: Run) -> Any:
        """What the proof counts from, read just before the run's window."""
        ...

    def clocks(self, start: Clocks | None = None) -> Clocks:
        """The window's clocks (the server's CPU where it can be read)."""
        ...

    def run_client(self, run: Run) -> ClientRun: ...

    def after_run(self, run: Run, got: ClientRun, before: Any) -> RunProof: ...

    def reads_server_cpu(self) -> bool:
        """Whether the server's CPU is read (its process here, or over ssh)."""
        ...

    def usage(self, cell: TransitCell, window: Window, read_bytes: int) -> Usage: ...

    def prove(self, record: TransitRecord) -> None:
        """The run against what its server (and tunnel) counted: ProofError otherwise."""
        ...
