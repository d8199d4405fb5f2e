"""What encbench owns on a server it did not start: databases it creates, named with the
run's key and marked as its own by a table `encbench_owner` whose COMMENT names the run.
Everything else on that server is never read, altered or dropped: a database of encbench's
name without this run's marker is refused (ownership), and a drop checks the marker again.
The at-rest table sets and the in-transit clients' database both live under these rules."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Protocol

from encbench.errors import BadInput
from encbench.results.store import ResultStore
from encbench.servers import leftovers
from encbench.servers.closed_on_exit import ClosedOnExit
from encbench.servers.leftovers import Address
from encbench.servers.mariadb.ssh_cpu import open_remote_cpu
from encbench.servers.mariadb.user_server import TargetLogin, UserServer
from encbench.servers.remote_cpu import SshAccess, SshCpu

MARKER_TABLE = "encbench_owner"
# How `encbench plan` writes run_key before the results directory, and so its key, exists.
PLACEHOLDER_KEY = "<12 hex digits of the results directory>"


class OwnedTarget(Address, SshAccess, TargetLogin, Protocol):
    """What encbench's databases need of the profile's target (its TargetSpec): where it
    is, its login and ssh access, and whether they are kept after the run."""

    @property
    def keep(self) -> bool: ...


def run_key(store_path: str) -> str:
    """A short, stable name part for a results directory: the same on --resume."""
    return hashlib.sha256(store_path.encode()).hexdigest()[:12]


def marker(store_path: str) -> str:
    return f"encbench run {run_key(store_path)}"


def ownership(server: UserServer, db: str, run_marker: str) -> str:
    """ "absent", or "ours" (this run's marker); BadInput for anything else.  Only the
    catalogue is read: never a table that is not encbench's."""
    if not server.query(
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s", (db,)
    ):
        return "absent"
    rows = server.query(
        "SELECT TABLE_COMMENT FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
        (db, MARKER_TABLE),
    )
    if rows and rows[0][0] == run_marker:
        return "ours"
    raise BadInput(
        f"database {db} exists on the {server.name} and is not this run's (no "
        f"encbench marker {run_marker!r}): encbench leaves it alone; drop or rename it "
        "yourself if it is yours, or use another --out"
    )


def create_owned(server: UserServer, db: str, run_marker: str, option: str = "") -> None:
    """Create `db` (with `option`, e.g. MySQL's DEFAULT ENCRYPTION) and mark it as this run's
    (a run's own left by an interrupted attempt is made again from the start); refuses one
    that is not this run's (ownership)."""
    if ownership(server, db, run_marker) == "ours":
        server.query(f"DROP DATABASE `{db}`")
    server.query(f"CREATE DATABASE `{db}`{option}")
    server.query(
        f"CREATE TABLE `{db}`.{MARKER_TABLE} (run VARCHAR(64) PRIMARY KEY) "
        f"ENGINE=InnoDB COMMENT=%s",
        (run_marker,),
    )


def drop_owned(server: UserServer, db: str, run_marker: str) -> None:
    """Drop `db` only when it carries this run's marker (checked again before the drop)."""
    if ownership(server, db, run_marker) == "ours":
        server.query(f"DROP DATABASE `{db}`")


class OwnedDatabases(ClosedOnExit):
    """encbench's own databases on the user's server ([target]), under the rules above: the
    server, this run's marker, the databases created so far and the server's CPU over ssh
    where the target allows it.  A context manager: on any exit the CPU reader is closed and,
    unless the target says keep, every database it created is dropped."""

    def __init__(self, store: ResultStore, spec: OwnedTarget) -> None:
        self.store = store
        self.spec = spec
        self.server = UserServer.of_target(self.spec)
        self.marker = marker(str(store.path.absolute()))
        self.created: list[str] = []
        self.cpu: SshCpu | None = None

    def create(self, db: str, option: str = "") -> None:
        create_owned(self.server, db, self.marker, option)
        self.created.append(db)

    def open_cpu(self, log: Callable[[str], None]) -> None:
        self.cpu = open_remote_cpu(self.server, self.spec, self.store, log)

    def close(self) -> None:
        if self.cpu is not None:
            self.cpu.close()
            self.cpu = None
        if not self.spec.keep:
            for db in reversed(self.created):
                # Ours by construction (created by this object) — checked again all the
                # same.  One the server no longer takes is recorded for `encbench clean
                # --target`.
                leftovers.drop_or_record(
                    self.spec, db, self.marker, self.store.path,
                    functools.partial(drop_owned, self.server, db, self.marker),
                )  # fmt: skip
        self.created = []
