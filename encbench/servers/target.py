"""What a study needs of a server it measures, whoever started it: the sandbox encbench
starts itself (servers/mariadb/sandbox.py), a node of a Galera cluster, or a user's own server.

Every target can be connected to and asked for its status counters.  Only some can give a
process id (to read the server's CPU from /proc: the server runs on this host) or a data
directory (to scan its files for the proof: they are readable from here).  A proof or a
measurement that needs one of those declares it (`Needs`), and where the target lacks it,
the report says plainly what was not proven or measured, and why — it is never faked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from encbench.errors import ServerError, ToolError


@dataclass(frozen=True)
class Connection:
    """Where and as whom a client connects to a server of a `kind` (its name in
    servers/server_kind.py; the first kind's, MariaDB's, unless a kind's package makes it):
    a unix socket or TCP.  The kind says how its clients reach it (its facts'
    `sysbench_connection`) and whence its password comes (each kind's sysbench.py)."""

    user: str
    database: str
    socket: Path | None = None
    host: str = ""
    port: int = 0
    kind: str = "mariadb"

    @classmethod
    def unix(cls, socket: Path, user: str, database: str) -> Connection:
        return cls(user, database, socket=socket)

    @classmethod
    def tcp(cls, host: str, port: int, user: str, database: str) -> Connection:
        return cls(user, database, host=host, port=port)


Capability = Literal["pid", "datadir"]

# Why a capability can be missing, in the words the report uses.
MISSING: dict[Capability, str] = {
    "pid": "the server's process is not on this host, so its CPU time cannot be read",
    "datadir": "the server's data directory is not readable from here, so its files cannot "
    "be scanned",
}


class Target(Protocol):
    name: str  # as the report names it: "plain", "encrypted", "node 2", a DSN's host
    database: str  # the database encbench created and owns on it

    def endpoint(self) -> Connection:
        """How clients (sysbench, the proofs) reach it."""
        ...

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]: ...

    def cursor(self, database: str | None = None) -> AbstractContextManager[Any]:
        """One session for statements that must share it (FLUSH … FOR EXPORT, UNLOCK)."""
        ...

    def global_status(self) -> dict[str, str]: ...

    def check_alive(self, timeout_s: float | None = None) -> None:
        """Raise the error that explains a client's failure (the server died or hangs);
        return quietly when the server is well."""
        ...

    @property
    def pid(self) -> int | None:
        """The server's process on this host, or None."""
        ...

    @property
    def datadir(self) -> Path | None:
        """Its data directory when readable here, or None."""
        ...


class Alive(Protocol):
    """A server that says, on request, whether it still answers (ServerError if not)."""

    def check_alive(self) -> None: ...


@contextmanager
def blame_the_server(target: Alive) -> Iterator[None]:
    """A client (sysbench, mariadb-dump) that fails says "lost connection"; when the cause
    is the server — it died, or hangs — say that instead, with the end of its log."""
    try:
        yield
    except ToolError as exc:
        if isinstance(exc, ServerError):
            raise
        target.check_alive()
        raise


@dataclass(frozen=True)
class Needs:
    """What one proof or measurement needs beyond a connection."""

    what: str  # e.g. "the raw-file witness"
    capabilities: tuple[Capability, ...] = ()

    def missing(self, target: Target) -> list[str]:
        """Why `target` cannot give this, one line per missing capability ([] when it can)."""
        have = {"pid": target.pid is not None, "datadir": target.datadir is not None}
        return [
            f"{self.what} was not checked: {MISSING[c]}" for c in self.capabilities if not have[c]
        ]


# Where a refusal of a target sends the user, whatever its kind.
PLAN_HINT = "`encbench plan` with the same profile and --target prints every fix"
