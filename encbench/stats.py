"""Paired statistics for interleaved rounds: pure functions, no I/O.

Each round measures both variants back to back, so the two values of a round share the
machine's momentary state; we analyse the per-round log ratio ln(encrypted/plain), never two
independent samples.  Two rounds with opposite orders (A B then B A, or B A then A B, chosen
at random per block) form a *block*; the block's value is the mean of its two log ratios, so
a drift of the machine's speed within the block cancels and each variant is first equally
often.  Blocks are the unit of every interval here.

Primary estimate — robust to the bursts of a shared machine (one round hit by another
process's burst moves a mean, not a median): the Hodges–Lehmann estimate of the block log
ratios (median of the Walsh averages (x_i + x_j)/2, i ≤ j) with its distribution-free
confidence interval from the exact Wilcoxon signed-rank distribution (Hollander & Wolfe,
"Nonparametric Statistical Methods", §3.2), transformed back to a ratio.  Beside it, for
continuity with the earlier method: the geometric mean with a Student-t interval.

Both intervals assume independent blocks.  Measured on this kind of machine, the ratios of
neighbouring rounds correlate (lag-1 autocorrelation up to +0.35), which makes an interval
that ignores it too narrow.  Both are therefore widened by f = √(1/(1−ρ)), the variance
inflation of means of two consecutive rounds of an AR(1) series with lag-1 correlation ρ;
ρ is estimated from the rounds (order effect removed, Kendall's small-sample bias added back,
clipped to 0 … 0.8: a negative ρ narrows nothing) — block_widening.

The stopping rule is Stein's two-stage design (engine/stopping_rule.py): the spread of the first
`min_rounds` rounds fixes how many blocks a cell needs, and the final interval is never
narrower than that stage's (stein_guard).  benchmarks/stopping_coverage.py simulates the whole
rule on AR(1) and bursty noise; tests/engine/test_stopping_rule.py holds its coverage.

Verdicts: a difference when the 95% interval excludes 1; equivalence only by two one-sided
tests (TOST: the 90% interval within ±margin); otherwise "no difference detected" with its
interval.  Every number a verdict shows is a cost, with the sign of overhead_pct: positive
when the encrypted side is worse (fewer transactions, longer times, more CPU).  Across a
report's cells, Holm's step-down adjustment of the primary metric's p-values says which cells
differ after correcting for their number; with n blocks the exact signed-rank test's p-value
cannot fall below 2/2ⁿ (p_floor), so a cell of few blocks cannot reach Holm's threshold
whatever its effect (blocks_to_reach).

Also here: the Student-t interval of one variant's mean (mean_ci), and Welch's test of whether
a ratio changed between two independent result sets (welch_log_ratios, `encbench compare`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

METHOD = (
    "Hodges–Lehmann estimate of paired log ratios (encrypted/plain) over blocks of two rounds "
    "in opposite orders, exact Wilcoxon signed-rank 95% CI, widened for lag-1 autocorrelation; "
    "geometric mean with Student-t CI beside it; equivalence by TOST; Holm across cells"
)
MAX_AUTOCORRELATION = 0.8
Direction = Literal["higher_is_better", "lower_is_better"]
# A series of values: a list, or the array a computation already holds.
Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class RatioEstimate:
    n: int  # independent units behind the interval: blocks
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float = 0.95
    # Two-sided p-value of "no difference", consistent with the interval: p < 1 − confidence
    # exactly when the interval excludes 1.  None where no interval could be formed.
    p_value: float | None = None
    autocorrelation: float = 0.0  # the lag-1 r the interval was widened for (0: not widened)

    @property
    def halfwidth_pct(self) -> float:
        """Half the CI's width in percent of the ratio: the ± that the target refers to."""
        if not math.isfinite(self.ci_high) or not math.isfinite(self.ci_low):
            return math.inf
        return 100.0 * (self.ci_high - self.ci_low) / 2.0 / self.ratio

    @property
    def significant(self) -> bool:
        return self.ci_low > 1.0 or self.ci_high < 1.0

    def to_json(self) -> dict[str, float | int | None]:
        def finite(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "n": self.n,
            "ratio": self.ratio,
            "ci_low": finite(self.ci_low),
            "ci_high": finite(self.ci_high),
            "halfwidth_pct": finite(self.halfwidth_pct),
        }


def t_quantile(df: float, confidence: float = 0.95) -> float:
    """Student's t quantile for a two-sided interval: t(0.5 + confidence/2, df).  `df` may be
    fractional (Welch–Satterthwaite)."""
    # scipy.special, not scipy.stats: the same quantile without seconds of import time.
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2.0))


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t statistic: 2·F_df(−|t|)."""
    from scipy.special import stdtr

    return float(2.0 * stdtr(df, -abs(t)))


def mean_ci(
    mean: float, stdev: float, n: int, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Student-t confidence interval of a mean from n samples: mean ± t(n−1)·stdev/√n; None
    below two samples (no spread to go by)."""
    if n < 2 or not math.isfinite(stdev):
        return None
    half = t_quantile(n - 1, confidence) * stdev / math.sqrt(n)
    return mean - half, mean + half


def lag1_autocorrelation(values: Values) -> float:
    """The lag-1 autocorrelation of a series in measuring order; 0 below 4 values or with no
    spread (nothing to go by)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 4:
        return 0.0
    d = x - x.mean()
    denominator = float(np.dot(d, d))
    if denominator <= 0.0:
        return 0.0
    return float(np.dot(d[:-1], d[1:]) / denominator)


def widening(values: Values) -> tuple[float, float]:
    """(r, f): the lag-1 autocorrelation r, corrected for its small-sample bias and clipped
    to 0 … MAX_AUTOCORRELATION, and the factor f = √((1+r)/(1−r)) by which an interval that
    assumes independence is too narrow for an AR(1) series with that r.  The sample r of n
    values is low by about (1 + 4r)/n (Kendall, 1954): with 20 blocks and a true 0.35 it
    would read 0.23 on average."""
    x = np.asarray(values, dtype=float)
    r = lag1_autocorrelation(x)
    if len(x) >= 4:
        r += (1.0 + 4.0 * r) / len(x)
    r = min(max(r, 0.0), MAX_AUTOCORRELATION)
    return r, math.sqrt((1.0 + r) / (1.0 - r))


Widen = bool | tuple[float, float]  # True: from the values themselves; or (r, f) given


def _widening(x: np.ndarray, widen: Widen) -> tuple[float, float]:
    if widen is True:
        return widening(x)
    if widen is False:
        return 0.0, 1.0
    return widen


def block_widening(round_logs: Values, first_is_plain: Sequence[bool]) -> tuple[float, float]:
    """(ρ, f) for the means of blocks of two consecutive rounds, from the rounds themselves
    (twice as many values as blocks, so a steadier ρ): each round's log ratio less the mean of
    the rounds of its order (an order effect is not drift), the lag-1 autocorrelation ρ of
    that series with Kendall's bias correction, clipped to 0 … MAX_AUTOCORRELATION.  For an
    AR(1) series of rounds, block means have lag-k correlation ρ^(2k−1)(1+ρ)/2, which sums to
    a variance inflation of 1/(1−ρ): f = √(1/(1−ρ))."""
    x = np.asarray(round_logs, dtype=float)
    order = np.asarray(first_is_plain, dtype=bool)
    if len(x) < 4:
        return 0.0, 1.0
    residual = x.copy()
    for side in (True, False):
        if np.any(order == side):
            residual[order == side] -= x[order == side].mean()
    if np.allclose(residual, 0.0):
        return 0.0, 1.0  # no spread left: nothing to correlate
    r = lag1_autocorrelation(residual)
    r += (1.0 + 4.0 * r) / len(x)
    r = min(max(r, 0.0), MAX_AUTOCORRELATION)
    return r, math.sqrt(1.0 / (1.0 - r))


def t_ratio(logs: Values, confidence: float = 0.95, widen: Widen = True) -> RatioEstimate:
    """exp of the mean of log ratios with a Student-t interval (widened for autocorrelation
    unless widen=False), and its two-sided p-value."""
    x = np.asarray(logs, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no rounds to summarise")
    mean = float(np.mean(x))
    if n < 2:
        return RatioEstimate(n, math.exp(mean), -math.inf, math.inf, confidence)
    r, f = _widening(x, widen)
    sem = f * float(np.std(x, ddof=1)) / math.sqrt(n)
    t = t_quantile(n - 1, confidence)
    p = t_two_sided_p(mean / sem, n - 1) if sem > 0 else (1.0 if mean == 0 else 0.0)
    return RatioEstimate(
        n, math.exp(mean), math.exp(mean - t * sem), math.exp(mean + t * sem), confidence, p, r
    )


# Above this many units the signed-rank distribution is taken as normal (exact to 4 digits
# long before; the exact one would cost seconds).
EXACT_SIGNED_RANK_MAX_N = 400


@functools.lru_cache(maxsize=32)
def signed_rank_cdf(n: int) -> np.ndarray:
    """P(T+ ≤ t) for t = 0 … n(n+1)/2: Wilcoxon's signed-rank statistic under the null, where
    each rank's sign is a fair coin.  Exact (the distribution built rank by rank) up to
    EXACT_SIGNED_RANK_MAX_N, normal with continuity correction above."""
    m = n * (n + 1) // 2
    if n > EXACT_SIGNED_RANK_MAX_N:
        from scipy.special import ndtr

        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        return np.asarray(ndtr((np.arange(m + 1) + 0.5 - m / 2.0) / sd))
    p = np.zeros(m + 1)
    p[0] = 1.0
    for rank in range(1, n + 1):
        shifted = np.zeros_like(p)
        shifted[rank:] = p[:-rank]
        p = 0.5 * (p + shifted)
    cdf = np.cumsum(p)
    cdf.setflags(write=False)
    return cdf


def signed_rank_k(n: int, confidence: float) -> int:
    """The order statistic k of the Walsh averages that bounds a two-sided interval:
    [W_(k), W_(M+1−k)] with k the largest integer such that P(T+ ≤ k − 1) ≤ (1−confidence)/2.
    0 when n is too small for any interval at that confidence (n < 6 at 95%)."""
    cdf = signed_rank_cdf(n)
    return int(np.searchsorted(cdf, (1.0 - confidence) / 2.0 + 1e-12, side="right"))


def hodges_lehmann(logs: Values, confidence: float = 0.95, widen: Widen = True) -> RatioEstimate:
    """exp of the Hodges–Lehmann estimate of the log ratios (the median of the Walsh averages)
    with the distribution-free interval of the Wilcoxon signed-rank test, its bounds moved
    away from the estimate by the autocorrelation factor (see the module's docstring), and the
    p-value consistent with that interval."""
    x = np.asarray(logs, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no rounds to summarise")
    i, j = np.triu_indices(n)
    walsh = np.sort((x[i] + x[j]) / 2.0)
    m = len(walsh)
    centre = float(np.median(walsh))
    k = signed_rank_k(n, confidence)
    if k < 1:
        return RatioEstimate(n, math.exp(centre), -math.inf, math.inf, confidence)
    r, f = _widening(x, widen)
    low = centre + f * (float(walsh[k - 1]) - centre)
    high = centre + f * (float(walsh[m - k]) - centre)
    return RatioEstimate(
        n,
        math.exp(centre),
        math.exp(low),
        math.exp(high),
        confidence,
        _signed_rank_p(walsh, centre, f, signed_rank_cdf(n)),
        r,
    )


def _signed_rank_p(walsh: np.ndarray, centre: float, f: float, cdf: np.ndarray) -> float:
    """The smallest α at which the (widened) interval excludes 0: the bound nearer 0 at
    order statistic k lies beyond 0 once more than `beyond` Walsh averages are on 0's side of
    c = centre·(1 − 1/f); the interval at level α uses k(α) = #{t: P(T+ ≤ t) ≤ α/2}, so
    p = 2·P(T+ ≤ beyond).  Unwidened (f = 1, c = 0) this is the exact two-sided signed-rank
    test, 2·P(T+ ≤ min(T+, T−))."""
    if centre == 0.0:
        return 1.0
    c = centre * (1.0 - 1.0 / f)
    if centre > 0:
        beyond = int(np.searchsorted(walsh, c, side="right"))
    else:
        beyond = len(walsh) - int(np.searchsorted(walsh, c, side="left"))
    return min(1.0, 2.0 * float(cdf[beyond]))


def stein_guard(estimate: RatioEstimate, stage_one: RatioEstimate, n_total: int) -> RatioEstimate:
    """The final interval of a two-stage design, at least as wide as Stein's: stage one's
    half-width (Student-t on n₀ units) scaled to all n units, h₀·√(n₀/n), around the estimate.
    A cell that stopped early because stage one looked quiet would otherwise report the
    narrow spread that made it stop (benchmarks/stopping_coverage.py: 91% → 95% coverage).
    The p-value is the larger of the two tests', so it still agrees with the interval."""
    if not (math.isfinite(stage_one.halfwidth_pct) and math.isfinite(estimate.halfwidth_pct)):
        return estimate
    if n_total <= 0 or stage_one.n < 2:
        return estimate
    half = (math.log(stage_one.ci_high) - math.log(stage_one.ratio)) * math.sqrt(
        stage_one.n / n_total
    )
    centre = math.log(estimate.ratio)
    low = min(math.log(estimate.ci_low), centre - half)
    high = max(math.log(estimate.ci_high), centre + half)
    if half <= 0:
        return estimate
    t = t_quantile(stage_one.n - 1, estimate.confidence)
    p_stein = t_two_sided_p(centre / (half / t), stage_one.n - 1)
    return dataclasses.replace(
        estimate,
        ci_low=math.exp(low),
        ci_high=math.exp(high),
        p_value=max(estimate.p_value or 0.0, p_stein),
    )


def equivalent(estimate_90: RatioEstimate, margin_pct: float) -> bool:
    """Two one-sided tests at 5% each (Schuirmann's TOST): the 90% interval lies within
    1 ± margin.  Only this may be called 'no difference beyond ±margin'."""
    m = margin_pct / 100.0
    return (
        math.isfinite(estimate_90.ci_low)
        and math.isfinite(estimate_90.ci_high)
        and estimate_90.ci_low >= 1.0 - m
        and estimate_90.ci_high <= 1.0 + m
    )


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which of m hypotheses are rejected with the family-wise
    error rate held at alpha.  Sorted p_(1) ≤ … ≤ p_(m): reject while p_(i) ≤ alpha/(m−i+1),
    stop at the first that is not."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    m = len(p_values)
    for rank, index in enumerate(order):
        if p_values[index] > alpha / (m - rank):
            break
        rejected[index] = True
    return rejected


def holm_thresholds(p_values: Sequence[float], alpha: float = 0.05) -> list[float]:
    """The p-value Holm's procedure asked of each hypothesis, in the order given: of a
    rejected one, alpha/(m−i+1) at its rank i; of every other, alpha/(m−k) with k rejected —
    the step where the procedure stopped, which that hypothesis alone would have had to pass
    (with the others as they are, it is rejected exactly when its p is at most that)."""
    rejected = holm(p_values, alpha)
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    m, k = len(p_values), sum(rejected)
    thresholds = [alpha / (m - k) if k < m else alpha] * m
    for rank, index in enumerate(order[:k]):
        thresholds[index] = alpha / (m - rank)
    return thresholds


def p_floor(blocks: int) -> float:
    """The smallest two-sided p-value the exact signed-rank test can give over `blocks`
    units: every sign alike, 2·(1/2)ⁿ.  Widening and Stein's guard only raise a p-value."""
    return min(1.0, 2.0 * 0.5**blocks)


def blocks_to_reach(threshold: float) -> int:
    """The fewest blocks whose exact signed-rank test can give a p-value at or below
    `threshold` (p_floor(n) ≤ threshold)."""
    n = 1
    while p_floor(n) > threshold:
        n += 1
    return n


def fewest_blocks_for_interval(confidence: float = 0.95) -> int:
    """The fewest blocks the signed-rank interval at `confidence` needs: 6 at 95%."""
    n = 1
    while signed_rank_k(n, confidence) < 1:
        n += 1
    return n


Kind = Literal["cost", "gain", "same", "unsure", "na"]


def kind(primary: RatioEstimate, same: bool, direction: Direction) -> Kind:
    """How a verdict is marked: cost or gain (a difference), same (equivalent by TOST),
    unsure (neither), na (no interval)."""
    if not math.isfinite(primary.halfwidth_pct):
        return "na"
    if primary.significant:
        worse = primary.ratio < 1.0 if direction == "higher_is_better" else primary.ratio > 1.0
        return "cost" if worse else "gain"
    return "same" if same else "unsure"


def _cost_interval(estimate: RatioEstimate, direction: Direction) -> str:
    """An interval as a cost (overhead_pct's sign: positive when encrypted is worse)."""
    _, low, high = overhead_pct(estimate, direction)
    return f"{estimate.confidence * 100:.0f}% CI {low:+.1f}…{high:+.1f}%"


NO_INTERVAL = "no verdict: too few rounds for an interval"


def verdict(
    primary: RatioEstimate,
    direction: Direction,
    equivalence: RatioEstimate | None = None,
    margin_pct: float = 2.0,
    more_less: tuple[str, str] = ("higher", "lower"),
) -> str:
    """The result in words, every number a cost (positive: encrypted is worse), as the
    overhead column shows it: '8.1% slower (95% CI 6.0–10.2%)' — both bounds the same side,
    in the word's sense; 'no difference beyond ±2% (90% CI −0.8…+1.1%)' only when TOST shows
    it; else 'no difference detected (95% CI −0.1…+3.6%)'.  A lower-is-better metric says
    `more_less` ("higher"/"lower"; a time: "longer"/"shorter")."""
    if not math.isfinite(primary.halfwidth_pct):
        return NO_INTERVAL
    pct = (primary.ratio - 1.0) * 100.0
    if primary.significant:
        if direction == "higher_is_better":
            word = "slower" if pct < 0 else "faster"
        else:
            word = more_less[0] if pct > 0 else more_less[1]
        low, high = (primary.ci_low - 1.0) * 100.0, (primary.ci_high - 1.0) * 100.0
        a, b = sorted((abs(low), abs(high)))
        conf = f"{primary.confidence * 100:.0f}% CI"
        return f"{abs(pct):.1f}% {word} ({conf} {a:.1f}–{b:.1f}%)"
    if equivalence is not None and equivalent(equivalence, margin_pct):
        return f"no difference beyond ±{margin_pct:g}% ({_cost_interval(equivalence, direction)})"
    return f"no difference detected ({_cost_interval(primary, direction)})"


def overhead_pct(estimate: RatioEstimate, direction: Direction) -> tuple[float, float, float]:
    """Cost of encryption in percent (positive = encryption costs), with its CI bounds."""
    if direction == "higher_is_better":
        return (
            (1.0 - estimate.ratio) * 100.0,
            (1.0 - estimate.ci_high) * 100.0,
            (1.0 - estimate.ci_low) * 100.0,
        )
    return (
        (estimate.ratio - 1.0) * 100.0,
        (estimate.ci_low - 1.0) * 100.0,
        (estimate.ci_high - 1.0) * 100.0,
    )


def mean_and_stdev(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=float)
    if len(arr) == 0:
        return math.nan, math.nan
    return float(np.mean(arr)), float(np.std(arr, ddof=1)) if len(arr) > 1 else 0.0


def log_se_from_ci(
    n: int, ci_low: float | None, ci_high: float | None, confidence: float = 0.95
) -> float | None:
    """The standard error of ln(ratio) behind a t_ratio interval: that interval is
    ln r ± t(n−1)·se on the log scale, so se = (ln hi − ln lo) / (2·t(n−1)).  None below two
    rounds (no interval)."""
    if n < 2 or not ci_low or not ci_high:
        return None
    return (math.log(ci_high) - math.log(ci_low)) / (2.0 * t_quantile(n - 1, confidence))


@dataclass(frozen=True)
class WelchTest:
    """Welch's t-test of d = ln r_B − ln r_A between two independent paired-ratio estimates."""

    log_difference: float
    ratio_of_ratios: float
    se_a: float | None = None
    se_b: float | None = None
    se: float | None = None
    df: float | None = None
    t: float | None = None
    p: float | None = None
    ratio_of_ratios_ci: tuple[float, float] | None = None
    significant: bool | None = None  # None: cannot tell (see note)
    note: str | None = None


def welch_log_ratios(a: RatioEstimate, b: RatioEstimate, confidence: float = 0.95) -> WelchTest:
    """Has the ratio changed from estimate A to estimate B (two independent result sets)?

    Method: Welch's unequal-variances t-test on the log ratios.  Each side's standard error is
    recovered from its CI (log_se_from_ci); d = ln r_B − ln r_A has se_d = √(se_A² + se_B²)
    and Welch–Satterthwaite degrees of freedom ν = se_d⁴ / (se_A⁴/(n_A−1) + se_B⁴/(n_B−1));
    t = d / se_d, two-sided p = 2·F_ν(−|t|); the CI of r_B / r_A is exp(d ± t(ν)·se_d).
    Significant when p < 1 − confidence."""
    d = math.log(b.ratio) - math.log(a.ratio)
    se_a = log_se_from_ci(a.n, _finite(a.ci_low), _finite(a.ci_high), confidence)
    se_b = log_se_from_ci(b.n, _finite(b.ci_low), _finite(b.ci_high), confidence)
    if se_a is None or se_b is None:
        return WelchTest(d, math.exp(d), note="cannot tell: a side has fewer than 2 rounds")
    se = math.hypot(se_a, se_b)
    if se == 0.0:
        return WelchTest(d, math.exp(d), note="cannot tell: no spread on either side")
    df = se**4 / (se_a**4 / (a.n - 1) + se_b**4 / (b.n - 1))
    t = d / se
    p = t_two_sided_p(t, df)
    half = t_quantile(df, confidence) * se
    return WelchTest(
        log_difference=d,
        ratio_of_ratios=math.exp(d),
        se_a=se_a,
        se_b=se_b,
        se=se,
        df=df,
        t=t,
        p=p,
        ratio_of_ratios_ci=(math.exp(d - half), math.exp(d + half)),
        significant=p < 1.0 - confidence,
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
