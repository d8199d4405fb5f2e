"""What a study is to the engine: its cells, its set-up, one run of one variant, the proof of
that run, and its metrics.  Everything else — resume, warm-up, the order of the variants in
a round, the stopping rule, appending to the results file, rewriting the documents, progress
and signals — is the runner's (engine/runner.py), the same for every study.

The lifecycle the runner drives, and which tests/engine/test_engine.py proves with a fake study:

    prepare
    setup(cells to do) ⟮
        open_cell(cell) ⟮                      (CellSkipped: recorded by the study, skipped)
            per block, when the study is Renewing: renew(cell) (fresh servers)
            warm_up(cell, variant) for each variant   (first, and after each renewal;
                                                       together: warm_up_together(cell))
            ( measure(run) → prove(record) → append ) × 2 per round, A B / B A, …
            or, when the study measures both variants at once (`together`: a duet round),
            ( measure_together(both runs) → prove each → append each ) per round
        ⟯ close
    ⟯ teardown                                (on success, error, Ctrl-C, SIGTERM, SIGHUP)

A run need not be a load of fixed length.  A study whose run is one timed operation (the
operations study: a start-up, a crash recovery, a backup) has no warm-up (`warmup_s = 0`: the
runner then calls no warm_up), lasts as long as its operation takes (`run_s` is then only the
progress display's estimate of one run), and compares a time, lower is better, as its primary
metric; rounds, blocks, interference and the stopping rule are the same for it.  What a run
does outside its measured part (stopping a server before timing its start, a write load before
a crash) is the study's own, inside `measure`; the record's `wall_s` counts all of it, so the
cell's time budget is real time.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from encbench.engine.stopping_rule import StopRule
from encbench.errors import EncbenchError
from encbench.results.schema import Metric


class CellSkipped(EncbenchError):
    """This cell cannot be measured here (e.g. no network namespaces without root); the study
    has recorded why, and the runner goes on with the next cell.  `final`: no --resume can
    measure it either (a user's server with one key type has no row for another), so the
    run is complete without it and its private folder (its secrets) goes at its end."""

    def __init__(self, why: str, *, final: bool = False) -> None:
        super().__init__(why)
        self.final = final


class Cell(Hashable, Protocol):
    """One row of a study's tables: hashable, with a name for people and one for files."""

    @property
    def label(self) -> str: ...

    @property
    def slug(self) -> str: ...


class RunRecord(Protocol):
    """What the runner reads of a study's record of one run."""

    STUDY: str
    SCHEMA: int

    @property
    def cell(self) -> Any: ...

    @property
    def round(self) -> int: ...

    @property
    def variant(self) -> str: ...

    @property
    def wall_s(self) -> float: ...

    def to_json(self) -> dict[str, Any]: ...


class Rule(StopRule, Protocol):
    """A study's stopping settings plus the length of its warm-up and of one run."""

    @property
    def warmup_s(self) -> int: ...

    @property
    def run_s(self) -> int:
        """The length of one run; for a study of timed operations, an estimate (the ETA's)."""
        ...

    @property
    def run_overhead_s(self) -> float:
        """What the plan takes a run to need beyond run_s (options.Rounds.run_overhead_s)."""
        ...

    def for_cell(self, cell: Any) -> Rule:
        """This rule as one cell runs by it (options.Rounds.for_cell)."""
        ...

    @property
    def block_s(self) -> float | None:
        """What the plan takes a block to last, where known (options.Rounds.block_s)."""
        ...

    def planned_rounds(self, cell: Any) -> int | None:
        """The rounds `plan` expects this cell to end at (options.Rounds.planned_rounds)."""
        ...


@dataclass(frozen=True)
class Run:
    """One run for a study to measure: which cell, round and variant, for how long, and where
    the tool's own output goes."""

    cell: Any
    round: int
    variant: str
    position: int  # 0 = first of its round, 1 = second (together: the first share, the second)
    session: str
    seconds: int  # the rule's run_s: a load's length; an operation takes what it takes
    raw: Path
    # Seconds the runner spent just before this run renewing and warming the servers for its
    # block (on a block's first run only): a record that keeps it (`setup_s`) charges it to
    # the cell's time budget (engine/stopping_rule.py: Round.wall_s).
    setup_s: float = 0.0

    def record_fields(self, started_at: str, wall_s: float) -> dict[str, Any]:
        """The fields every study's run record begins with: which cell, round and variant,
        its place in the round, the session, when it started and how long it took."""
        return {
            "cell": self.cell,
            "round": self.round,
            "variant": self.variant,
            "position": self.position,
            "session": self.session,
            "started_at": started_at,
            "wall_s": wall_s,
        }


class Study(Protocol):
    """A study: only its own parts.  `record_type` names the results file and the metrics."""

    name: str  # as a profile's `studies` names it; also the results file's name
    record_type: type[Any]

    @property
    def rule(self) -> Rule: ...

    @property
    def metrics(self) -> tuple[Metric, ...]: ...

    def cells(self) -> Sequence[Any]:
        """Every cell the profile asks for, in the order they are measured."""
        ...

    def prepare(self) -> None:
        """Once per run, before any server: what the study records about the machine."""
        ...

    def setup(self, todo: Sequence[Any]) -> AbstractContextManager[object]:
        """Servers, hosts, data for the cells still to do; torn down on any exit."""
        ...

    def open_cell(self, cell: Any) -> AbstractContextManager[object]:
        """Make the cell measurable (restart with its regime, open its routes, prove them)."""
        ...

    def warm_up(self, cell: Any, variant: str, seconds: int, raw: Path) -> None: ...

    # True: both variants of a round run at the same time (machine/placement.py's duet), so the
    # runner calls measure_together (the study is then also Together) with both runs
    # instead of measure with each in turn.
    together: bool

    def measure(self, run: Run) -> Any:
        """Measure one run of one variant; returns the study's record of it."""
        ...

    def prove(self, record: Any) -> None:
        """The per-run proof: raise ProofError when the run was not what its variant claims."""
        ...


@runtime_checkable
class Renewing(Protocol):
    """A study whose servers can start afresh between blocks, so that what one pair of
    server processes has of its own is not the same in every block of a cell."""

    def renew(self, cell: Any) -> bool:
        """Called before every block's first round; True when the servers were restarted
        (the runner then warms both variants up again before the block)."""
        ...


@runtime_checkable
class Together(Protocol):
    """A study that can measure both runs of a round at the same time."""

    def measure_together(self, runs: Sequence[Run]) -> Sequence[Any]:
        """A record of each run, in the order of `runs`; each run's `position` names its
        share of the machine (the first or the second half of the CPUs)."""
        ...

    def warm_up_together(self, cell: Any, seconds: int, raw: Path) -> None:
        """Warm both variants up for rounds measured together (`raw` names the tool's
        output; the study derives one file per variant and part from it)."""
        ...
