"""The runner's lifecycle, proven once with a fake study (like hyperfine's lifecycle test):
the order of set-up, cells, warm-ups, rounds and teardown; resume after an interrupt without
measuring a finished run again; a failing proof stops the study and keeps what was proven."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from encbench.engine import rounds, stopping_rule
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner, cell_upper_bound_s, estimated_seconds
from encbench.engine.study import CellSkipped, Run
from encbench.errors import Interrupted, ProofError
from encbench.profiles.options import Rounds
from encbench.results.store import ResultStore
from encbench.studies.at_rest.records import CellKey, RunRecord


def a_record(run: Run, tps: float) -> RunRecord:
    return RunRecord(
        cell=run.cell,
        round=run.round,
        variant=run.variant,
        position=run.position,
        session=run.session,
        started_at="t",
        wall_s=1.0,
        tps=tps,
        qps=tps,
        transactions=int(tps),
        ignored_errors=0,
        reconnects=0,
        latency_avg_ms=1.0,
        latency_p95_ms=1.0,
        latency_max_ms=1.0,
        server_cpu_s=1.0,
        cpu_ms_per_txn=1.0,
        harness_cpu_s=0.0,
        bp_read_requests=1,
        bp_reads=0,
        pages_read=0,
        pages_written=0,
        raw_output=str(run.raw.name),
    )


@dataclass
class FakeStudy:
    """Records every call; measures encrypted 10% slower with a little alternating noise."""

    calls: list[str]
    rule: Rounds
    name: str = "at-rest"
    record_type: type[RunRecord] = RunRecord
    cell_list: Sequence[CellKey] = (
        CellKey("oltp_read_only", "in-memory", 1),
        CellKey("oltp_read_only", "in-memory", 2),
    )
    skip: CellKey | None = None
    skip_for_good: bool = False  # the skip is final: no --resume can measure that cell
    fail_proof_at: int | None = None  # the n-th measured run fails its proof
    interrupt_at: int | None = None  # the n-th measured run is interrupted (Ctrl-C)
    loaded_at: int | None = None  # the n-th measured run shares the machine with a burst
    measured: int = 0
    together: bool = False  # a duet: both runs of a round at once (measure_together)

    @property
    def metrics(self) -> tuple[Any, ...]:
        return RunRecord.METRICS

    def cells(self) -> Sequence[CellKey]:
        return self.cell_list

    def prepare(self) -> None:
        self.calls.append("prepare")

    @contextmanager
    def setup(self, todo: Sequence[CellKey]) -> Iterator[None]:
        self.calls.append(f"setup {[c.threads for c in todo]}")
        try:
            yield
        finally:
            self.calls.append("teardown")

    @contextmanager
    def open_cell(self, cell: CellKey) -> Iterator[None]:
        if cell == self.skip:
            raise CellSkipped("no namespaces here", final=self.skip_for_good)
        self.calls.append(f"open {cell.threads}")
        try:
            yield
        finally:
            self.calls.append(f"close {cell.threads}")

    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None:
        self.calls.append(f"warm-up {variant}")

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None:
        self.calls.append("warm-up together")

    def measure(self, run: Run) -> RunRecord:
        self.measured += 1
        if self.measured == self.interrupt_at:
            raise Interrupted("stopped by SIGINT")
        self.calls.append(f"measure r{run.round} {run.variant}")
        noise = 1 if run.round % 2 else -1
        record = a_record(run, (90.0 if run.variant == "encrypted" else 100.0) + noise)
        if self.measured == self.loaded_at:
            record = dataclasses.replace(record, interference_pct=60.0)
        return record

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]:
        self.calls.append(
            f"together r{runs[0].round} " + " ".join(f"{r.variant}@{r.position}" for r in runs)
        )
        return [
            a_record(r, (90.0 if r.variant == "encrypted" else 100.0) + r.round % 2) for r in runs
        ]

    def prove(self, record: RunRecord) -> None:
        self.calls.append(f"prove r{record.round} {record.variant}")
        if self.measured == self.fail_proof_at:
            raise ProofError(f"round {record.round} {record.variant} is not encrypted")


RULE = Rounds(warmup_s=1, run_s=1, min_rounds=2, max_rounds=2, target_halfwidth_pct=2.0)
CELL = CellKey("oltp_read_only", "in-memory", 1)


class Draws(random.Random):
    """Each block's order drawn from a list: below 0.5 starts with plain."""

    def __init__(self, values: Sequence[float] = (0.0,)) -> None:
        super().__init__()
        self.values = list(values)
        self.at = 0

    def random(self) -> float:
        value = self.values[min(self.at, len(self.values) - 1)]
        self.at += 1
        return value


def runner(
    tmp_path: Path, documents: list[bool] | None = None, draws: Sequence[float] = (0.0,)
) -> Runner:
    store_dir = tmp_path / "out"
    store = (
        ResultStore.open(store_dir)
        if store_dir.exists()
        else ResultStore.create(store_dir, "t", "")
    )
    written = documents if documents is not None else []
    return Runner(
        store, RunProgress(estimated_seconds([])), documents=written.append, rng=Draws(draws)
    )


def test_the_runner_drives_every_study_through_one_lifecycle(tmp_path: Path) -> None:
    calls: list[str] = []
    documents: list[bool] = []
    run = runner(tmp_path, documents)
    run.run([FakeStudy(calls, RULE)])
    per_cell = [  # a block: the first round's order drawn (here A B), the second the other
        "warm-up plain",
        "warm-up encrypted",
        "measure r0 plain",
        "prove r0 plain",
        "measure r0 encrypted",
        "prove r0 encrypted",
        "measure r1 encrypted",  # B A: the second round starts with the other variant
        "prove r1 encrypted",
        "measure r1 plain",
        "prove r1 plain",
    ]
    assert calls == [
        "prepare",
        "setup [1, 2]",
        "open 1",
        *per_cell,
        "close 1",
        "open 2",
        *per_cell,
        "close 2",
        "teardown",
    ]
    assert run.complete
    # documents rewritten before the first cell and after every round
    assert documents == [False] * (1 + 2 * 2)
    runs = run.store.runs(RunRecord)
    assert len(runs) == 8
    assert [r.position for r in runs[:4]] == [0, 1, 0, 1]


@dataclass
class RenewingStudy(FakeStudy):
    """A study whose servers start afresh before every block (engine.study.Renewing)."""

    renews: bool = True
    setups: list[tuple[int, int, float]] = dataclasses.field(default_factory=list)

    def renew(self, cell: CellKey) -> bool:
        self.calls.append(f"renew {cell.threads}")
        time.sleep(0.05)  # a restart takes time, which the cell's budget must see
        return self.renews

    def measure(self, run: Run) -> RunRecord:
        self.setups.append((run.round, run.position, run.setup_s))
        return dataclasses.replace(super().measure(run), setup_s=run.setup_s)


def test_a_renewing_study_gets_fresh_servers_and_a_warm_up_before_every_block(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    rule = Rounds(warmup_s=1, run_s=1, min_rounds=4, max_rounds=4, target_halfwidth_pct=2.0)
    one_cell = (CellKey("oltp_read_only", "in-memory", 1),)
    study = RenewingStudy(calls, rule, cell_list=one_cell)
    run = runner(tmp_path)
    run.run([study])
    runner_store = run.store
    cell = calls[calls.index("open 1") + 1 : calls.index("close 1")]
    steps = [c for c in cell if not c.startswith("prove")]
    block = ["renew 1", "warm-up plain", "warm-up encrypted"]
    assert steps[:3] == block, "the first block too: the servers may come from the last cell"
    assert steps[7:10] == block, "after two rounds, a new block on new servers"
    assert steps.count("renew 1") == 2
    # Not between the two rounds of a block: its halves must share their servers.
    assert [c for c in steps[3:7] if not c.startswith("measure")] == []
    # The renewal's time goes to the block's first run and so into the cell's budget.
    charged = [(r, p) for r, p, s in study.setups if s > 0]
    assert charged == [(0, 0), (2, 0)]
    assert all(s >= 0.05 for _, _, s in study.setups if s > 0)
    done = rounds.cell_rounds(runner_store.runs(RunRecord), one_cell[0], rule)
    runs_s = 8 * 1.0  # a_record: every run 1 s
    assert done.wall_s == pytest.approx(runs_s + sum(s for _, _, s in study.setups))
    assert done.wall_s > runs_s + 2 * 0.05


def test_the_budget_counts_a_new_blocks_set_up_once_and_none_inside_a_block() -> None:
    def run(round_: int, variant: str, position: int, setup_s: float) -> RunRecord:
        planned = Run(CELL, round_, variant, position, "s", 1, Path("r.txt"), setup_s)
        return dataclasses.replace(a_record(planned, 100.0), wall_s=10.0, setup_s=setup_s)

    records = [
        run(0, "plain", 0, 8.0), run(0, "encrypted", 1, 0.0),
        run(1, "encrypted", 0, 0.0), run(1, "plain", 1, 0.0),
    ]  # fmt: skip
    # One block: 40 s of runs and 8 s of set-up.  The next block: 2 rounds of 20 s + 8 s.
    ends = Rounds(min_rounds=2, max_rounds=100, cell_budget_s=48 + 48 - 1)
    goes_on = Rounds(min_rounds=2, max_rounds=100, cell_budget_s=48 + 48)
    for rule, stops in ((ends, True), (goes_on, False)):
        state = rounds.cell_rounds(records, CELL, rule)
        assert state.wall_s == 48.0
        assert (stopping_rule._budget_spent(state, rule, 2) is not None) is stops
    # Inside a block only its second round is ahead, with no set-up of its own.
    open_block = rounds.cell_rounds(records[:2], CELL, goes_on)
    assert stopping_rule._budget_spent(open_block, Rounds(cell_budget_s=28 + 20), 1) is None
    assert stopping_rule._budget_spent(open_block, Rounds(cell_budget_s=28 + 19), 1) is not None


def test_a_duets_round_spends_the_time_of_its_longer_run_not_of_both() -> None:
    # Both variants of a duet run at once: its budget must see the round's real time, or a
    # duet's cells end after about two-thirds of their budget (as benchmarks/methods.py found them).
    def run(variant: str, position: int, wall_s: float, sharing: str) -> RunRecord:
        planned = Run(CELL, 0, variant, position, "s", 1, Path("r.txt"), 0.0)
        return dataclasses.replace(a_record(planned, 100.0), wall_s=wall_s, sharing=sharing)

    for sharing, real_s in (("duet", 1.1), ("sequential", 2.1), ("pinned", 2.1)):
        records = [run("plain", 0, 1.0, sharing), run("encrypted", 1, 1.1, sharing)]
        (round_,) = rounds.complete_rounds(records, CELL)
        assert round_.runs_s == pytest.approx(real_s), sharing


def test_a_study_that_cannot_renew_is_warmed_up_once_per_cell(tmp_path: Path) -> None:
    calls: list[str] = []
    rule = Rounds(warmup_s=1, run_s=1, min_rounds=4, max_rounds=4, target_halfwidth_pct=2.0)
    one_cell = (CellKey("oltp_read_only", "in-memory", 1),)
    runner(tmp_path).run([RenewingStudy(calls, rule, cell_list=one_cell, renews=False)])
    assert calls.count("renew 1") == 2
    assert calls.count("warm-up plain") == 1


def test_a_duet_study_measures_each_round_at_once_and_alternates_the_halves(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    run = runner(tmp_path)
    run.run([FakeStudy(calls, RULE, together=True)])
    first_cell = calls[calls.index("open 1") + 1 : calls.index("close 1")]
    assert first_cell == [
        "warm-up together",  # the study warms both as it will measure them
        # position = the half of the CPUs: each variant has each half once per block
        "together r0 plain@0 encrypted@1",
        "prove r0 plain",
        "prove r0 encrypted",
        "together r1 encrypted@0 plain@1",
        "prove r1 encrypted",
        "prove r1 plain",
    ]
    assert not any(c.startswith("measure ") for c in calls)
    assert len(run.store.runs(RunRecord)) == 8
    assert run.complete


def test_a_block_may_start_with_either_variant(tmp_path: Path) -> None:
    calls: list[str] = []
    runner(tmp_path, draws=(0.9,)).run([FakeStudy(calls, RULE)])
    measured = [c for c in calls if c.startswith("measure")][:4]
    assert measured == [
        "measure r0 encrypted",
        "measure r0 plain",
        "measure r1 plain",
        "measure r1 encrypted",
    ]


def test_a_round_hit_by_other_load_is_kept_and_measured_again(tmp_path: Path) -> None:
    calls: list[str] = []
    one_cell = (CellKey("oltp_read_only", "in-memory", 1),)
    run = runner(tmp_path)
    run.run([FakeStudy(calls, RULE, cell_list=one_cell, loaded_at=3)])  # round 1, first run
    measured = [c for c in calls if c.startswith("measure")]
    assert measured == [
        "measure r0 plain",
        "measure r0 encrypted",
        "measure r1 encrypted",
        "measure r1 plain",  # round 1 had a burst: the same order once more
        "measure r2 encrypted",
        "measure r2 plain",
    ]
    runs = run.store.runs(RunRecord)
    assert len(runs) == 6, "the loaded round stays in the results file"
    assert run.complete


def test_an_interrupted_study_resumes_without_measuring_a_kept_run_again(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    first = runner(tmp_path)
    with pytest.raises(Interrupted):
        first.run([FakeStudy(calls, RULE, interrupt_at=6)])  # cell 2, round 0, variant B
    assert calls[-2:] == ["close 2", "teardown"], "the set-up is torn down on an interrupt"
    kept = first.store.runs(RunRecord)
    assert len(kept) == 5  # cell 1: 4 runs; cell 2: round 0's plain run (a half round)

    calls.clear()
    second = runner(tmp_path)
    second.run([FakeStudy(calls, RULE)])
    assert calls[:3] == ["prepare", "setup [2]", "open 2"], "only the unfinished cell"
    measured = [c for c in calls if c.startswith("measure")]
    # The half round 0 is never paired: round numbering goes on from 1, a new block.
    assert measured == [
        "measure r1 plain",
        "measure r1 encrypted",
        "measure r2 encrypted",
        "measure r2 plain",
    ]
    runs = second.store.runs(RunRecord)
    assert runs[:5] == kept, "the runs measured before the interrupt are unchanged"
    assert len(runs) == 9


def test_a_failing_proof_stops_the_study_and_the_run_is_not_kept(tmp_path: Path) -> None:
    calls: list[str] = []
    run = runner(tmp_path)
    with pytest.raises(ProofError, match="round 1 encrypted"):
        run.run([FakeStudy(calls, RULE, fail_proof_at=3)])
    assert calls[-1] == "teardown"
    assert "open 2" not in calls
    runs = run.store.runs(RunRecord)
    assert [(r.round, r.variant) for r in runs] == [(0, "plain"), (0, "encrypted")]
    assert not run.complete


def test_a_skipped_cell_is_passed_over_and_the_next_measured(tmp_path: Path) -> None:
    calls: list[str] = []
    study = FakeStudy(calls, RULE, skip=CellKey("oltp_read_only", "in-memory", 1))
    run = runner(tmp_path)
    run.run([study])
    assert "open 1" not in calls
    assert "open 2" in calls
    assert calls[-1] == "teardown"
    assert not run.complete, "a skipped cell is tried again on --resume: keep the keys"


def test_a_cell_skipped_for_good_leaves_the_run_complete(tmp_path: Path) -> None:
    # A user's server has no row for another key type: --resume cannot change that, so the
    # run's secrets need not be kept for it.
    calls: list[str] = []
    skip = CellKey("oltp_read_only", "in-memory", 1)
    study = FakeStudy(calls, RULE, skip=skip, skip_for_good=True)
    run = runner(tmp_path)
    run.run([study])
    assert "open 1" not in calls and "open 2" in calls
    assert run.complete


def test_a_finished_study_is_not_set_up_again(tmp_path: Path) -> None:
    runner(tmp_path).run([FakeStudy([], RULE)])
    calls: list[str] = []
    again = runner(tmp_path)
    again.run([FakeStudy(calls, RULE)])
    assert calls == ["prepare"]
    assert again.complete


class ByThreads(Rounds):
    """A rule that gives the 2-thread cell four rounds where the others get two, as a study
    with per-cell budgets does (the state-transfer study's method_budget_s)."""

    def for_cell(self, cell: object) -> ByThreads:
        if getattr(cell, "threads", 0) == 2:
            return self.model_copy(update={"min_rounds": 4, "max_rounds": 4, "cell_budget_s": 200})
        return self


def test_each_cell_runs_by_its_own_rule_where_the_study_gives_one(tmp_path: Path) -> None:
    calls: list[str] = []
    rule = ByThreads(warmup_s=1, run_s=1, min_rounds=2, max_rounds=2, target_halfwidth_pct=2.0)
    runner(tmp_path).run([FakeStudy(calls, rule)])
    measured = [c for c in calls if c.startswith("measure")]
    # Cell 1: rounds 0-1; cell 2: rounds 0-3, two runs each.
    assert len(measured) == 2 * 2 + 4 * 2
    # The ETA's bound adds each cell's own budget: 85 s (the default) and 200 s.
    study = FakeStudy([], rule)
    one, two = (cell_upper_bound_s(study, c) for c in study.cells())
    assert one < two and estimated_seconds([study]) == one + two


class WarmByThreads(Rounds):
    """The rule of a study of two kinds whose 2-thread cell is the other kind's, with no
    warm-up of its own (engine/kinds_rule.py: each cell by its own kind's section)."""

    def for_cell(self, cell: object) -> WarmByThreads:
        if getattr(cell, "threads", 0) == 2:
            return self.model_copy(update={"warmup_s": 0})
        return self


def test_each_cell_is_warmed_up_by_its_own_rule(tmp_path: Path) -> None:
    calls: list[str] = []
    rule = WarmByThreads(warmup_s=1, run_s=1, min_rounds=2, max_rounds=2, target_halfwidth_pct=2.0)
    runner(tmp_path).run([FakeStudy(calls, rule)])
    opened = [i for i, c in enumerate(calls) if c.startswith("open")]
    first, second = calls[opened[0] : opened[1]], calls[opened[1] :]
    assert first.count("warm-up plain") == 1 and second.count("warm-up plain") == 0
