"""What both kinds' in-transit study objects keep beside their runs alike: the study's record
file (`<record STUDY>.json`: proofs, PKI, the cells skipped with why), read back on --resume
and written after each change, and the run's private directory (its keys, passwords and
certificates)."""

from __future__ import annotations

from typing import Any

from encbench.engine.study import CellSkipped
from encbench.engine.study_base import Given, StudyBasics
from encbench.results.store import ResultStore
from encbench.servers import keys


class TransitBasics(StudyBasics):
    """A study class's record of its run, under its record type's name."""

    store: ResultStore
    record: dict[str, Any]

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.private = keys.private_dir(self.store.path)
        self.record = self._read_record()

    def _record_file(self) -> str:
        return f"{self.record_type.STUDY}.json"

    def _read_record(self) -> dict[str, Any]:
        """What a run before this one (--resume) recorded, with the keys every run keeps."""
        found: dict[str, Any] = self.store.read_json(self._record_file()) or {}
        for key in ("proofs", "skipped", "pki"):
            found.setdefault(key, {})
        return found

    def _skip(self, cell: Any, why: str, *, final: bool = False) -> CellSkipped:
        """Recorded with its reason.  A cell skipped before (no namespaces then) is tried
        again on --resume, which may run elsewhere; a `final` one (a target's) stays so."""
        self.record["skipped"][cell.slug] = why
        self._save_record()
        return CellSkipped(why, final=final)

    def _save_record(self) -> None:
        self.store.write_json(self._record_file(), self.record)
