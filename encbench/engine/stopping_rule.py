"""A cell's estimate and its stopping rule: pure functions, no I/O.  The runner decides with
them when a cell is done and the report states with them what it found, so a re-rendered
report says exactly what the run decided.

The design (fixed before any run, so that no result can steer it):
- A round measures both variants back to back.  Two rounds in opposite orders form a block,
  the unit of every interval (engine/rounds.py pairs them).
- A cell's estimate of a metric is the Hodges–Lehmann estimate of its blocks' log ratios
  with the Wilcoxon interval, widened for their autocorrelation (stats.py); beside it, the
  Student-t interval over the same blocks.
- A cell stops only after whole blocks, never before `min_rounds` rounds that count, when the
  blocks that stage one of Stein's two-stage rule planned for ±target are measured, or when
  the next block would overrun the cell's time budget (rejected rounds spend it too), or at
  `max_rounds`.
- Across a study's cells, Holm's step-down adjustment of the primary metric's p-values says
  which cells still differ after correcting for their number, and the threshold each faced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from encbench import stats

# The two sides of every paired comparison: `plain` is the control.
VARIANTS = ("plain", "encrypted")
ROUNDS_PER_BLOCK = 2


def rounds_for_interval(confidence: float = 0.95) -> int:
    """The fewest rounds that give a cell an interval: 12 at 95% (6 blocks)."""
    return ROUNDS_PER_BLOCK * stats.fewest_blocks_for_interval(confidence)


def no_verdict(rounds: int, confidence: float = 0.95) -> str:
    """What a cell with too few rounds for an interval says instead of a verdict: never "no
    difference detected", which would read as a finding."""
    noun = "round" if rounds == 1 else "rounds"
    return f"no verdict: {rounds} {noun}, an interval needs {rounds_for_interval(confidence)}"


class StopRule(Protocol):
    """The stopping settings: every study's profile section has them (options.Rounds)."""

    @property
    def min_rounds(self) -> int: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def target_halfwidth_pct(self) -> float: ...
    @property
    def cell_budget_s(self) -> float: ...
    @property
    def interference_max_pct(self) -> float: ...
    @property
    def equivalence_margin_pct(self) -> float: ...
    # A cell's own settings (a budget of its own; in a study of several kinds, its kind's).
    def for_cell(self, cell: Any) -> StopRule: ...


@dataclass(frozen=True)
class Round:
    number: int
    runs: dict[str, Any]  # variant → the run record of either study

    @property
    def wall_s(self) -> float:
        """The round's real time: its runs and, where a record keeps it, the set-up of its
        block just before it (fresh servers and their warm-up: RunRecord.setup_s)."""
        return self.runs_s + self.setup_s

    @property
    def runs_s(self) -> float:
        """The real time of the round's runs: one after the other they add up; measured at
        once (a duet, measure.sharing) the longest is the round's.  Charging a duet twice
        would end its cells after about two-thirds of their budget."""
        walls = [float(r.wall_s) for r in self.runs.values()]
        together = all(getattr(r, "sharing", "") == "duet" for r in self.runs.values())
        return max(walls) if together else sum(walls)

    @property
    def setup_s(self) -> float:
        return float(sum(getattr(r, "setup_s", 0.0) for r in self.runs.values()))

    @property
    def order(self) -> tuple[str, ...]:
        """The variants in the order they were measured."""
        return tuple(sorted(self.runs, key=lambda v: self.runs[v].position))

    def log_ratio(self, metric: str) -> float:
        ratio = float(getattr(self.runs["encrypted"], metric)) / float(
            getattr(self.runs["plain"], metric)
        )
        return math.log(ratio)


@dataclass(frozen=True)
class Block:
    """Two rounds in opposite orders: the unit of every interval."""

    first: Round
    second: Round

    def log_ratio(self, metric: str) -> float:
        return (self.first.log_ratio(metric) + self.second.log_ratio(metric)) / 2.0


@dataclass(frozen=True)
class CellRounds:
    """What a cell's runs amount to: the rounds that count, those measured again because of
    interference, and the blocks the estimate uses."""

    counted: list[Round]
    rejected: list[Round]
    blocks: list[Block]
    unpaired: list[Round] = field(default_factory=list)  # counted but not (yet) in a block

    @property
    def wall_s(self) -> float:
        """Measuring time spent on the cell, rejected rounds included."""
        return sum(r.wall_s for r in (*self.counted, *self.rejected))

    @property
    def open_block(self) -> bool:
        """A counted round waits for its partner: the block must be finished first."""
        return bool(self.unpaired)


# -- the estimate -------------------------------------------------------------------------
def block_log_ratios(blocks: Sequence[Block], metric: str) -> list[float]:
    return [b.log_ratio(metric) for b in blocks]


def widening(blocks: Sequence[Block], metric: str) -> tuple[float, float]:
    """How much the blocks' autocorrelation widens their intervals, estimated from their
    rounds (stats.block_widening)."""
    rounds = [r for b in blocks for r in (b.first, b.second)]
    return stats.block_widening(
        [r.log_ratio(metric) for r in rounds], [r.order[0] == VARIANTS[0] for r in rounds]
    )


def ratio_estimate(
    blocks: Sequence[Block], metric: str, confidence: float = 0.95, stage_one: int = 0
) -> stats.RatioEstimate | None:
    """The primary estimate of one metric over a cell's blocks: Hodges–Lehmann with the
    Wilcoxon signed-rank interval (stats.hodges_lehmann), widened for autocorrelation; with
    `stage_one` blocks of a two-stage design, no narrower than Stein's (stats.stein_guard)."""
    if not blocks:
        return None
    estimate = stats.hodges_lehmann(
        block_log_ratios(blocks, metric), confidence, widening(blocks, metric)
    )
    if stage_one >= 2 and len(blocks) > stage_one:
        spread = t_estimate(blocks[:stage_one], metric, confidence)
        assert spread is not None
        estimate = stats.stein_guard(estimate, spread, len(blocks))
    return estimate


def stage_one_blocks(rule: StopRule) -> int:
    """Stage one of the two-stage rule, in whole blocks: the first `min_rounds` rounds."""
    return -(-rule.min_rounds // ROUNDS_PER_BLOCK)


def estimate(
    blocks: Sequence[Block], metric: str, rule: StopRule, confidence: float = 0.95
) -> stats.RatioEstimate | None:
    """What a cell reports for one metric: the primary estimate under the profile's
    two-stage rule."""
    return ratio_estimate(blocks, metric, confidence, stage_one_blocks(rule))


def t_estimate(
    blocks: Sequence[Block], metric: str, confidence: float = 0.95
) -> stats.RatioEstimate | None:
    """The Student-t interval beside it, over the same blocks, widened likewise; also stage
    one's spread, which plans the cell's blocks and guards its final interval."""
    if not blocks:
        return None
    return stats.t_ratio(
        block_log_ratios(blocks, metric), confidence, widen=widening(blocks, metric)
    )


@dataclass(frozen=True)
class Comparison:
    """One metric's paired comparison, encrypted against plain, over a cell's blocks: the
    primary estimate (95%), the 90% one that tests equivalence (TOST), the Student-t
    interval beside them, the overhead in percent with its bounds, and the verdict."""

    estimate: stats.RatioEstimate
    equivalence: stats.RatioEstimate
    beside: stats.RatioEstimate
    overhead_pct: tuple[float, float, float]  # positive: encryption costs
    verdict: str
    kind: stats.Kind


def compare(
    blocks: Sequence[Block],
    metric: str,
    direction: stats.Direction,
    rule: StopRule,
    more_less: tuple[str, str] = ("higher", "lower"),
    rounds: int | None = None,
) -> Comparison:
    """A cell's comparison in one metric over its (at least one) blocks, its verdict in the
    metric's own words (stats.verdict); too few blocks for an interval say how many `rounds`
    (default: the blocks') the cell has and how many an interval needs."""
    margin_pct = rule.equivalence_margin_pct
    primary = estimate(blocks, metric, rule)
    equivalence = estimate(blocks, metric, rule, 0.90)
    beside = t_estimate(blocks, metric)
    assert primary is not None and equivalence is not None and beside is not None
    same = stats.equivalent(equivalence, margin_pct)
    found = stats.kind(primary, same, direction)
    return Comparison(
        estimate=primary,
        equivalence=equivalence,
        beside=beside,
        overhead_pct=stats.overhead_pct(primary, direction),
        verdict=no_verdict(ROUNDS_PER_BLOCK * len(blocks) if rounds is None else rounds)
        if found == "na"
        else stats.verdict(primary, direction, equivalence, margin_pct, more_less),
        kind=found,
    )


def too_few(
    counted: Sequence[Round], metric: str, direction: stats.Direction
) -> tuple[float, float]:
    """Rounds but no complete block: the ratio of their geometric means and its overhead in
    percent, without an interval."""
    ratio = math.exp(sum(r.log_ratio(metric) for r in counted) / len(counted))
    over = (1.0 - ratio if direction == "higher_is_better" else ratio - 1.0) * 100.0
    return ratio, over


# -- the stopping rule --------------------------------------------------------------------
def planned_blocks(state: CellRounds, m: StopRule, metric: str) -> int | None:
    """Stein's two-stage rule: the first `min_rounds` rounds (whole blocks) are stage one;
    their spread alone fixes how many blocks the cell needs for ±target,
    N = n₀·(h₀/target)², with h₀ the Student-t half-width of stage one (t with n₀−1 degrees of
    freedom: the price of estimating the spread from a few blocks).  None before stage one is
    complete.  Deciding N once, from stage one, instead of stopping whenever the interval
    happens to look narrow, keeps the final interval's coverage
    (tests/engine/test_stopping_rule.py)."""
    first = stage_one_blocks(m)
    if len(state.blocks) < max(first, 2):
        return None
    stage_one = t_estimate(state.blocks[:first], metric) if first >= 2 else None
    if stage_one is None or not math.isfinite(stage_one.halfwidth_pct):
        return first
    need = first * (stage_one.halfwidth_pct / m.target_halfwidth_pct) ** 2
    return max(first, math.ceil(need - 1e-9))


def stop_reason(state: CellRounds, m: StopRule, metric: str) -> str | None:
    """Why this cell needs no more rounds, or None when it needs another.  Decided only at
    the end of a block: the blocks that stage one planned are measured, unless the budget or
    max_rounds ends the cell first."""
    open_block = state.open_block
    if not open_block and len(state.counted) >= m.max_rounds:
        return f"max rounds ({m.max_rounds}) reached"
    if len(state.counted) + len(state.rejected) >= 2 * m.max_rounds:
        # A machine that never quietens down would otherwise hold the cell until its budget.
        return f"max rounds ({m.max_rounds}) reached, {len(state.rejected)} of them measured again"
    planned = None if open_block else planned_blocks(state, m, metric)
    if planned is not None and len(state.blocks) >= planned:
        return f"planned {planned * ROUNDS_PER_BLOCK} rounds for ±{m.target_halfwidth_pct:g}% done"
    spent = _budget_spent(state, m, 1 if open_block else ROUNDS_PER_BLOCK)
    # Where stage one had planned more, say how many: what the target would have cost.
    wanted = planned_blocks(state, m, metric) if spent else None
    if spent and wanted is not None and len(state.blocks) < wanted:
        spent += (
            f" before the {wanted * ROUNDS_PER_BLOCK} rounds planned for "
            f"±{m.target_halfwidth_pct:g}%"
        )
    return spent


def _budget_spent(state: CellRounds, m: StopRule, rounds_ahead: int) -> str | None:
    rounds = sorted([*state.counted, *state.rejected], key=lambda r: r.number)
    if not rounds:
        return None
    # Stop when what must come next would overrun the budget, not after overrunning it: the
    # rounds ahead, and a new block's set-up (fresh servers, warm-up) once, as the last took.
    recent = rounds[-ROUNDS_PER_BLOCK:]
    ahead = rounds_ahead * max(r.runs_s for r in recent)
    if not state.open_block:
        ahead += max(r.setup_s for r in recent)
    if state.wall_s + ahead > m.cell_budget_s:
        return f"time budget ({m.cell_budget_s:g} s) ended"
    return None


def upper_bound_s(rule: StopRule, run_s: float, warmup_s: float) -> float:
    """One cell's measuring time at most: its budget, or its minimum rounds if longer."""
    return max(rule.cell_budget_s, rule.min_rounds * 2 * (run_s + 1)) + 2 * warmup_s


# -- over a study's cells -----------------------------------------------------------------
class Tested(Protocol):
    """What Holm's adjustment reads of a cell's estimate of the primary metric."""

    @property
    def kind(self) -> stats.Kind: ...
    @property
    def p_value(self) -> float | None: ...


@dataclass(frozen=True)
class Adjusted:
    """Holm's adjustment of one metric over a study's measured cells."""

    differs_holm: list[bool]  # per cell, in the order given: still differs after it
    thresholds: list[float]  # per cell, in the order given: the p-value Holm asked of it
    differ: int  # cells whose 95% interval excludes no difference
    by_chance: float  # expected false positives at 95% if no cell differed
    equivalent: int  # cells with no difference beyond the margin (TOST)


HOLM_ALPHA = 0.05


def holm_over_cells(tested: Sequence[Tested]) -> Adjusted:
    """Holm's step-down adjustment of the cells' p-values (a missing one counts as 1)."""
    p_values = [e.p_value or 1.0 for e in tested]
    return Adjusted(
        differs_holm=stats.holm(p_values, HOLM_ALPHA),
        thresholds=stats.holm_thresholds(p_values, HOLM_ALPHA),
        differ=sum(e.kind in ("cost", "gain") for e in tested),
        by_chance=0.05 * len(tested),
        equivalent=sum(e.kind == "same" for e in tested),
    )
