"""The in-transit study's record file, in-transit.json: what its runs keep beside their
records (proofs, PKI, the server's TLS settings, the cells skipped with why), read back on
--resume and written after each change.  Each kind's side keeps its part in a `Book`:
MariaDB's at the top (as every results directory has had it), another kind's under its
kind's name; a results directory whose PostgreSQL runs kept theirs in pg-in-transit.json
(before they were this study's) is read from there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.engine.study import CellSkipped
from encbench.results.store import ResultStore
from encbench.studies.in_transit import kind

RECORD_FILE = "in-transit.json"
# Where PostgreSQL's runs kept their part before they were this study's.
EARLIER_FILES = {"postgresql": "pg-in-transit.json"}
MARIADB = kind.MARIADB


def read(store: ResultStore) -> dict[str, Any]:
    """The whole record: what a run before this one (--resume) wrote, with each earlier
    kind's file under its kind."""
    found: dict[str, Any] = store.read_json(RECORD_FILE) or {}
    for of, name in EARLIER_FILES.items():
        if of not in found and (earlier := store.read_json(name)) is not None:
            found[of] = earlier
    return found


def part_of(record: dict[str, Any], of: str) -> dict[str, Any]:
    """A kind's part of the record (MariaDB's: the record itself), with the keys every
    kind's part keeps."""
    part = record if of == MARIADB else record.setdefault(of, {})
    for key in ("proofs", "skipped", "pki"):
        part.setdefault(key, {})
    return part


class Book:
    """One kind's part of the record, saved whole after each change."""

    def __init__(self, part: dict[str, Any], save: Callable[[], None]) -> None:
        self.data = part
        self.save = save

    def skip(self, cell: Any, why: str, *, final: bool = False) -> CellSkipped:
        """Recorded with its reason.  A cell skipped before (no namespaces then) is tried
        again on --resume, which may run elsewhere; a `final` one (a target's) stays so."""
        self.data["skipped"][cell.slug] = why
        self.save()
        return CellSkipped(why, final=final)
