"""What the at-rest study asks of a kind's servers (a `Side`): the study's runner (study.py)
keeps one record type and one results file for every kind, opens each kind's side in turn
(one kind's servers go before the next kind's come) and hands it the kind's cells; the
side provisions its plain and encrypted servers, proves them, sets each cell up (its
regime's memory, its encryption configuration), runs the kind's client and reads what its
server counted of a run into the study's RunRecord, and proves each run.  MariaDB's and
MySQL's side is mariadb_side.py, PostgreSQL's postgresql_side.py; a further kind's is named
by its KindCells in the study's definition."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench.engine.progress import RunProgress
from encbench.engine.study import Run
from encbench.profiles.profile import Profile
from encbench.results.store import ResultStore
from encbench.studies.at_rest.records import CellKey, RunRecord


@dataclass(frozen=True)
class SideContext:
    """What a side is made with: the run's store, profile and progress."""

    store: ResultStore
    profile: Profile
    progress: RunProgress


class Side(Protocol):
    """A kind's servers in the at-rest study."""

    # Both variants of a round measured at once (a duet: engine/study.py's Together).
    together: bool

    def prepare(self) -> None:
        """Once per run, before any server: what the kind records of the machine (the
        cipher's speed)."""
        ...

    def setup(self, todo: Sequence[CellKey]) -> AbstractContextManager[Any]:
        """Its plain and encrypted servers (or table sets) made, filled and proven for the
        cells `todo`; stopped and removed at the end."""
        ...

    def open_cell(self, cell: CellKey) -> AbstractContextManager[Any]:
        """The servers set up for the cell (its regime, its configuration); CellSkipped where
        this machine cannot give it."""
        ...

    def renew(self, cell: CellKey) -> bool:
        """Before each block: True where its servers started afresh (engine's Renewing)."""
        ...

    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None: ...

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None: ...

    def measure(self, run: Run) -> RunRecord: ...

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]: ...

    def prove(self, record: RunRecord) -> None:
        """The run against what its servers counted: ProofError otherwise."""
        ...
