"""What encbench created on a user's server (`--target`: its `encbench_…` databases) and
could not drop at the end of a run, because the server went away or stopped answering.
Each is named with the statement that drops it, and recorded in this machine's state
(one JSON file each, state.py), so that `encbench clean --target DSN` drops it once the
server answers again: with the run's marker read again first (servers/owned.py), as every
drop of encbench's is."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench import state
from encbench.errors import EncbenchError, Interrupted
from encbench.results.store import write_json
from encbench.servers import server_kind

KIND = "target-databases"


class Address(Protocol):
    """What a target's [target] says of where it is (profile.TargetSpec is one)."""

    @property
    def kind(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def socket(self) -> str: ...


def address(spec: Address) -> str:
    return spec.socket or f"{spec.host}:{spec.port}"


def drop_statement(kind: str, database: str) -> str:
    return server_kind.named(kind).drop_statement(database)


@dataclass(frozen=True)
class Leftover:
    kind: str  # the server's kind (servers/server_kind.py): "mariadb" also for MySQL
    address: str  # host:port, or the socket's path
    database: str
    marker: str  # the run's marker the database carries (owned.py, each kind's target)
    results: str  # the run's results directory

    def file_name(self) -> str:
        key = f"{self.kind}\0{self.address}\0{self.database}".encode()
        return hashlib.sha256(key).hexdigest()[:16] + ".json"

    def statement(self) -> str:
        return drop_statement(self.kind, self.database)

    def words(self, why: str = "") -> str:
        because = f" ({why})" if why else ""
        return (
            f"database {self.database} on the target {self.address} was not dropped{because}: "
            f"run `{self.statement()}` there, or `encbench clean --target DSN` once it answers"
        )


def record(leftover: Leftover) -> None:
    write_json(state.folder(KIND) / leftover.file_name(), asdict(leftover))


def forget(leftover: Leftover) -> None:
    with contextlib.suppress(FileNotFoundError):
        (state.base() / KIND / leftover.file_name()).unlink()


def recorded() -> list[Leftover]:
    def make(data: dict[str, Any]) -> Leftover:
        return Leftover(**data)

    return state.read_records(KIND, make)


def of_run(results: Path) -> list[Leftover]:
    where = str(results.absolute())
    return [found for found in recorded() if found.results == where]


def on(spec: Address) -> list[Leftover]:
    """The leftovers recorded on the server `spec` names (its kind and address)."""
    return [f for f in recorded() if f.kind == spec.kind and f.address == address(spec)]


def drop_or_record(
    spec: Address, database: str, marker: str, results: Path, drop: Callable[[], None]
) -> str | None:
    """`drop()` the run's database; where it fails (the server is gone), the database
    recorded and its words (a line for the user); None when dropped."""
    found = Leftover(spec.kind, address(spec), database, marker, str(results.absolute()))
    try:
        drop()
    except EncbenchError as exc:
        record(found)
        return found.words(str(exc))
    except Interrupted:  # a stop during the drop: perhaps not dropped, so recorded
        record(found)
        raise
    forget(found)  # an earlier attempt's record, now done
    return None
