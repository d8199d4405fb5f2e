"""The data-at-rest study's runner: for each kind of server the profile measures, a plain
and an encrypted server (encbench's sandboxes, or two table sets on the user's server:
`--target`), identical but for encryption; per cell, paired rounds of the same client
against both.

Lifecycle: per kind, in the order of its cells: its side (side.py) makes, fills and proves
its servers → per cell: the side sets them up for it → warm-up → paired rounds until the
interval is tight enough or the budget ends, each run measured and proven by the side into
the study's one record type.  One kind's servers go before the next kind's come: each kind
runs where it would alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from encbench.engine.kind_turns import KindTurns
from encbench.engine.study import Run
from encbench.engine.study_base import Given, StudyBasics
from encbench.studies.at_rest.mariadb_side import MariaDbAtRest
from encbench.studies.at_rest.records import MARIADB, CellKey, RunRecord
from encbench.studies.at_rest.side import Side, SideContext
from encbench.studies.definition import further_kind


def side_of(of: str) -> Callable[[SideContext], Side]:
    """How a kind's side is made: MariaDB's (the study's first kind) here, each further
    kind's as its KindCells in the study's definition says."""
    if of == MARIADB:
        return MariaDbAtRest
    made: Callable[[SideContext], Side] = further_kind(RunRecord.STUDY, of).side
    return made


class AtRestStudy(StudyBasics):
    record_type = RunRecord

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.context = SideContext(self.store, self.profile, self.progress)
        self.sides: dict[str, Side] = {}
        self.turns = KindTurns()
        self._todo: Sequence[CellKey] = ()
        # Whether the kind whose servers are up measures both variants of a round at once:
        # the engine asks inside a cell, whose kind's servers are then up.
        self.together = False

    def side(self, of: str) -> Side:
        if of not in self.sides:
            self.sides[of] = side_of(of)(self.context)
        return self.sides[of]

    # -- once per run ----------------------------------------------------------------------
    def prepare(self) -> None:
        super().prepare()
        for kind in dict.fromkeys(c.kind for c in self.cells()):
            self.side(kind).prepare()

    # -- each kind's servers -----------------------------------------------------------------
    @contextlib.contextmanager
    def setup(self, todo: Sequence[CellKey]) -> Iterator[AtRestStudy]:
        with contextlib.ExitStack() as stack:
            self._todo = todo
            stack.callback(self.turns.close)
            yield self

    def _side_up(self, cell: CellKey) -> Side:
        """The cell's kind's side, its servers set up (the previous kind's gone first)."""
        side = self.side(cell.kind)
        todo = [c for c in self._todo if c.kind == cell.kind]
        self.turns.turn_to(cell.kind, lambda stack: stack.enter_context(side.setup(todo)))
        self.together = side.together
        return side

    @contextlib.contextmanager
    def open_cell(self, cell: CellKey) -> Iterator[None]:
        with self._side_up(cell).open_cell(cell):
            yield

    def renew(self, cell: CellKey) -> bool:
        return self.side(cell.kind).renew(cell)

    # -- one run ---------------------------------------------------------------------------
    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None:
        self.side(cell.kind).warm_up(cell, variant, seconds, raw)

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None:
        self.side(cell.kind).warm_up_together(cell, seconds, raw)

    def measure(self, run: Run) -> RunRecord:
        return self.side(run.cell.kind).measure(run)

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]:
        return self.side(runs[0].cell.kind).measure_together(runs)

    def prove(self, record: RunRecord) -> None:
        self.side(record.cell.kind).prove(record)
