"""How rounds are ordered, which runs pair up, and when a cell is done.
Pure functions: the runner and the report share them, so a re-rendered report says exactly
what the run decided."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from encbench import stats

# The two sides of every paired comparison: `plain` is the control.
VARIANTS = ("plain", "encrypted")


class Measured(Protocol):
    """What pairing needs of a run record: both studies' records have it."""

    @property
    def cell(self) -> Hashable: ...
    @property
    def round(self) -> int: ...
    @property
    def variant(self) -> str: ...
    @property
    def wall_s(self) -> float: ...


class StopRule(Protocol):
    """The stopping settings: every study's profile section has them (profile.Rounds)."""

    @property
    def min_rounds(self) -> int: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def target_halfwidth_pct(self) -> float: ...
    @property
    def cell_budget_s(self) -> float: ...


def round_order(round_no: int) -> tuple[str, ...]:
    """A B, B A, A B, … : over two rounds each variant is first once (ABBA), so a trend in the
    machine's speed during a round does not favour one side."""
    return VARIANTS if round_no % 2 == 0 else tuple(reversed(VARIANTS))


@dataclass(frozen=True)
class Round:
    number: int
    runs: dict[str, Any]  # variant → the run record of either study

    @property
    def wall_s(self) -> float:
        return float(sum(r.wall_s for r in self.runs.values()))


def complete_rounds(runs: Iterable[Measured], cell: Hashable) -> list[Round]:
    """Rounds of this cell in which both variants finished; a half round (interrupted between
    its two runs) is not paired with anything and is measured again."""
    by_round: dict[int, dict[str, Any]] = defaultdict(dict)
    for run in runs:
        if run.cell == cell:
            by_round[run.round][run.variant] = run
    return [Round(n, rs) for n, rs in sorted(by_round.items()) if all(v in rs for v in VARIANTS)]


def next_round_number(runs: Iterable[Measured], cell: Hashable) -> int:
    numbers = [r.round for r in runs if r.cell == cell]
    return max(numbers) + 1 if numbers else 0


def ratio_estimate(rounds: list[Round], metric: str) -> stats.RatioEstimate | None:
    """The paired ratio encrypted / plain of one metric over a cell's rounds."""
    if not rounds:
        return None
    return stats.paired_ratio(
        [getattr(r.runs["encrypted"], metric) for r in rounds],
        [getattr(r.runs["plain"], metric) for r in rounds],
    )


def stop_reason(rounds: list[Round], m: StopRule, metric: str) -> str | None:
    """Why this cell needs no more rounds, or None when it needs another."""
    n = len(rounds)
    if n >= m.max_rounds:
        return f"max rounds ({m.max_rounds}) reached"
    if n < m.min_rounds:
        return None
    estimate = ratio_estimate(rounds, metric)
    assert estimate is not None
    if estimate.halfwidth_pct <= m.target_halfwidth_pct:
        return f"target ±{m.target_halfwidth_pct:g}% reached"
    elapsed = sum(r.wall_s for r in rounds)
    last = rounds[-1].wall_s
    # Stop when one more round would overrun the budget, not after overrunning it.
    if elapsed + last > m.cell_budget_s:
        return f"time budget ({m.cell_budget_s:g} s) ended"
    return None


def upper_bound_s(rule: StopRule, run_s: float, warmup_s: float) -> float:
    """One cell's measuring time at most: its budget, or its minimum rounds if longer."""
    return max(rule.cell_budget_s, rule.min_rounds * 2 * (run_s + 1)) + 2 * warmup_s
