"""How rounds are ordered, which runs pair up and which rounds count.  Pure functions: the
runner and the report share them, so a re-rendered report says exactly what the run decided;
what the rounds estimate and when a cell stops are in engine/stopping_rule.py.

The design (fixed before any run, so that no result can steer it):
- A round measures both variants back to back.  Two rounds in opposite orders form a block;
  the first round of a block takes A B or B A at random, the second the other order, so each
  variant is first equally often and a drift within the block cancels in its mean.
- A round in which either run had more interference (other processes' and stolen CPU, as a
  share of the machine) than the cell's usual level plus the profile's `interference_max_pct`
  does not count: it stays in the results file, the report counts it, and the runner measures
  another round in its place.  The usual level is the median over the cell's runs so far and
  the round's own two: a VM's steal rises with the run's own disk I/O (the host emulates the
  disk on the cores our vCPUs want: 0% in memory, 5–11% io-bound on this machine, the same for
  both variants), so a fixed limit would reject a whole io-bound cell; a burst from elsewhere
  stands out above that level.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable
from typing import Any, Protocol

from encbench.engine.stopping_rule import VARIANTS, Block, CellRounds, Round, StopRule


class Measured(Protocol):
    """What pairing needs of a run record: every study's records have it."""

    @property
    def cell(self) -> Hashable: ...
    @property
    def round(self) -> int: ...
    @property
    def variant(self) -> str: ...
    @property
    def position(self) -> int: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def interference_pct(self) -> float: ...


def complete_rounds(runs: Iterable[Measured], cell: Hashable) -> list[Round]:
    """Rounds of this cell in which both variants finished; a half round (interrupted between
    its two runs) is not paired with anything and is measured again."""
    by_round: dict[int, dict[str, Any]] = defaultdict(dict)
    for run in runs:
        if run.cell == cell:
            by_round[run.round][run.variant] = run
    return [Round(n, rs) for n, rs in sorted(by_round.items()) if all(v in rs for v in VARIANTS)]


def cell_rounds(runs: Iterable[Measured], cell: Hashable, rule: StopRule) -> CellRounds:
    """Sort a cell's complete rounds: rejected (interference above the cell's usual level by
    more than the limit) or counted; counted rounds pair into blocks in measuring order, each
    with the earliest counted round of the opposite order still waiting for a partner.  (The
    runner measures that opposite order next, so partners are neighbours unless a rejected
    round or an interrupt came between.)"""
    counted, rejected, blocks = [], [], []
    waiting: list[Round] = []
    seen: list[float] = []  # interference of every run of the cell so far
    for r in complete_rounds(runs, cell):
        own = [float(run.interference_pct) for run in r.runs.values()]
        seen += own
        if max(own) - statistics.median(seen) > rule.interference_max_pct:
            rejected.append(r)
            continue
        counted.append(r)
        partner = next((w for w in waiting if w.order != r.order), None)
        if partner is None:
            waiting.append(r)
        else:
            waiting.remove(partner)
            blocks.append(Block(partner, r))
    return CellRounds(counted, rejected, blocks, waiting)


def next_round_number(runs: Iterable[Measured], cell: Hashable) -> int:
    numbers = [r.round for r in runs if r.cell == cell]
    return max(numbers) + 1 if numbers else 0


def next_order(state: CellRounds, rng: random.Random) -> tuple[str, ...]:
    """The order of the next round: the opposite of the earliest counted round still waiting
    for its block partner; otherwise a new block, its order drawn at random."""
    if state.unpaired:
        return tuple(reversed(state.unpaired[0].order))
    return VARIANTS if rng.random() < 0.5 else tuple(reversed(VARIANTS))
