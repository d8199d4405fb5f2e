"""The paired-round runner: one loop for every study.

Per study: read back the runs already on disk (--resume), leave out the cells that are
finished, set the study up, and per cell: warm both variants up, then measure rounds — one
run per variant, in blocks of two rounds of opposite order, the first drawn at random — until
the stopping rule (engine/stopping_rule.py) says the interval is tight enough or the cell's
budget is spent; a round with too much interference is measured again.  Every run is proven and
appended (fsynced) the moment it is measured; the documents are rewritten after every round,
so an interrupt at any point loses at most the run in progress.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from encbench import stopping
from encbench.engine import rounds, stopping_rule
from encbench.engine.progress import RunProgress
from encbench.engine.study import CellSkipped, Renewing, Run, Study, Together
from encbench.results.schema import primary_metric
from encbench.results.store import ResultStore


def new_session() -> str:
    """Names the process that measured a run: a resumed run has several sessions."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}"


def cell_upper_bound_s(study: Study, cell: Any) -> float:
    rule = study.rule.for_cell(cell)
    return stopping_rule.upper_bound_s(rule, rule.run_s, rule.warmup_s)


def estimated_seconds(studies: Sequence[Study]) -> float:
    """An upper bound of the measuring time, for the progress display's ETA."""
    return sum(cell_upper_bound_s(s, cell) for s in studies for cell in s.cells())


@dataclass
class _Progress:
    """Where the ETA stands: finished cells count their whole share, the cell being measured
    its measured seconds (capped at its share)."""

    display: RunProgress
    base_s: float = 0.0
    done_s: float = 0.0

    def cell_done(self, share_s: float) -> None:
        self.done_s += share_s
        self.display.set_completed(self.base_s + self.done_s)

    def within(self, seconds: float, share_s: float) -> None:
        self.display.set_completed(self.base_s + self.done_s + min(seconds, share_s))


@dataclass
class Runner:
    store: ResultStore
    progress: RunProgress
    # Rewrites summary.json and report.md (and report.html when asked): given by the caller,
    # so the engine knows nothing of the report.
    documents: Callable[[bool], object]
    session: str = field(default_factory=new_session)
    complete: bool = False  # every cell of every study finished
    # Draws each block's order; seeded only by tests.
    rng: random.Random = field(default_factory=random.SystemRandom)

    def run(self, studies: Sequence[Study]) -> None:
        state = _Progress(self.progress)
        complete = True
        for study in studies:
            complete &= self.run_study(study, state)
            state.base_s += state.done_s
            state.done_s = 0.0
        self.complete = complete

    def run_study(self, study: Study, state: _Progress | None = None) -> bool:
        """Measure what is left of one study; True when every cell is finished or skipped for
        good (any other skipped cell is tried again by --resume, perhaps where it can be
        measured)."""
        state = state or _Progress(self.progress)
        runs: list[Any] = self.store.runs(study.record_type)
        every = list(study.cells())
        todo = [c for c in every if not self._finished(study, runs, c)]
        state.cell_done(sum(cell_upper_bound_s(study, c) for c in every if c not in todo))
        study.prepare()
        if not todo:
            self.progress.log(f"{study.name}: every cell is already finished")
            return True
        skipped = 0
        with study.setup(todo):
            self.documents(False)
            for cell in todo:
                stopping.check()
                share = cell_upper_bound_s(study, cell)
                try:
                    with study.open_cell(cell):
                        self._measure_cell(study, cell, runs, state, share)
                except CellSkipped as exc:
                    skipped += not exc.final
                    self.progress.log(f"{cell.label}: not measured — {exc}")
                    self.documents(False)
                state.cell_done(share)
        return skipped == 0

    def _finished(self, study: Study, runs: list[Any], cell: Any) -> bool:
        rule = study.rule.for_cell(cell)
        done = rounds.cell_rounds(runs, cell, rule)
        return stopping_rule.stop_reason(done, rule, self._primary(study)) is not None

    def _log_rejected(self, cell: Any, hit: stopping_rule.Round, limit_pct: float) -> None:
        worst = max(r.interference_pct for r in hit.runs.values())
        self.progress.log(
            f"{cell.label}: round {hit.number} measured again — other load took {worst:.0f}% of "
            f"the machine, more than {limit_pct:g}% above the cell's usual level"
        )

    def _keep(self, study: Study, runs: list[Any], records: Sequence[Any]) -> None:
        # Proven before they are kept: a run that is not what its variant claims is no
        # measurement of it (ProofError stops the study; the run is in raw/).
        for record in records:
            study.prove(record)
        for record in records:
            self.store.append(record)
            runs.append(record)

    @staticmethod
    def _primary(study: Study) -> str:
        return primary_metric(study.metrics).name

    def _warm_up(self, study: Study, cell: Any) -> None:
        # The cell's own kind's warm-up, in a study of several kinds (engine/kinds_rule.py).
        seconds = study.rule.for_cell(cell).warmup_s
        if not seconds:
            return
        self.progress.status(f"{cell.label}: warm-up")
        if study.together:
            # Both at once, as they are measured (the study decides how).
            assert isinstance(study, Together), f"{study.name} cannot measure together"
            raw = self.store.raw_path(f"{study.name}-{cell.slug}-warmup.txt")
            study.warm_up_together(cell, seconds, raw)
            return
        for variant in stopping_rule.VARIANTS:
            raw = self.store.raw_path(f"{study.name}-{cell.slug}-warmup-{variant}.txt")
            study.warm_up(cell, variant, seconds, raw)

    def _measure_cell(
        self, study: Study, cell: Any, runs: list[Any], state: _Progress, share: float
    ) -> None:
        rule, metric = study.rule.for_cell(cell), self._primary(study)
        cold = True  # the variants need a warm-up before the next round
        started = time.monotonic()
        number = -1  # the round just measured
        while True:
            stopping.check()  # a stop that was lost on its way up ends the run here
            done = rounds.cell_rounds(runs, cell, rule)
            if any(r.number == number for r in done.rejected):
                self._log_rejected(cell, done.rejected[-1], rule.interference_max_pct)
            reason = stopping_rule.stop_reason(done, rule, metric)
            if reason is not None:
                break
            before = time.monotonic()
            if isinstance(study, Renewing) and not done.open_block and study.renew(cell):
                cold = True
            setup_s = 0.0
            if cold:
                self._warm_up(study, cell)
                cold = False
                setup_s = time.monotonic() - before
            number = rounds.next_round_number(runs, cell)
            estimate = stopping_rule.estimate(done.blocks, metric, rule)
            finite = estimate is not None and math.isfinite(estimate.halfwidth_pct)
            hw = f"±{estimate.halfwidth_pct:.1f}%" if estimate and finite else "±?"
            again = f", {len(done.rejected)} measured again" if done.rejected else ""
            self.progress.status(
                f"{cell.label}: round {len(done.counted) + 1}, CI so far {hw}{again}"
            )
            raw_name = f"{study.name}-{cell.slug}-r{number:03d}-{{}}.txt"
            planned = [
                Run(cell, number, variant, position, self.session, rule.run_s,
                    self.store.raw_path(raw_name.format(variant)),
                    setup_s if position == 0 else 0.0)
                for position, variant in enumerate(rounds.next_order(done, self.rng))
            ]  # fmt: skip
            if study.together:
                assert isinstance(study, Together), f"{study.name} cannot measure together"
                self._keep(study, runs, study.measure_together(planned))
            else:
                for run in planned:
                    self._keep(study, runs, [study.measure(run)])
            self.documents(False)
            state.within(time.monotonic() - started, share)
        m = primary_metric(study.metrics)
        verdict = (
            stopping_rule.compare(
                done.blocks, metric, m.direction, rule, m.more_less, len(done.counted)
            ).verdict
            if done.blocks
            else stopping_rule.no_verdict(len(done.counted))
        )
        again = f", {len(done.rejected)} measured again" if done.rejected else ""
        self.progress.log(f"{cell.label}: {verdict} [{len(done.counted)} rounds{again}, {reason}]")
