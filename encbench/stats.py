"""Paired statistics for interleaved rounds: pure functions, no I/O.

Each round measures both variants back to back (order alternating A B, B A, …), so the two
values of a round share the machine's momentary state.  We therefore analyse the per-round
ratio encrypted/plain, not two independent samples (an unpaired test would count the
machine's drift as noise twice).

Method: the geometric mean of the per-round ratios, with a Student-t 95% confidence interval
computed on the log ratios and transformed back (a ratio's log is symmetric around 0, the
ratio itself is not).  With n rounds: mean m and standard deviation s of ln(ratio_i),
CI = exp(m ± t(0.975, n-1) · s / √n).

Also here: the Student-t interval of one variant's mean (mean_ci), and Welch's test of
whether a ratio changed between two independent result sets (welch_log_ratios, for
`encbench compare`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

METHOD = (
    "geometric mean of per-round paired ratios (encrypted/plain), Student-t 95% CI on log ratios"
)
Direction = Literal["higher_is_better", "lower_is_better"]


@dataclass(frozen=True)
class RatioEstimate:
    n: int
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float = 0.95

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


def paired_ratio(
    encrypted: Sequence[float], plain: Sequence[float], confidence: float = 0.95
) -> RatioEstimate:
    if len(encrypted) != len(plain):
        raise ValueError("paired samples must have the same length")
    if not encrypted:
        raise ValueError("no rounds to summarise")
    enc = np.asarray(encrypted, dtype=float)
    pla = np.asarray(plain, dtype=float)
    if np.any(enc <= 0) or np.any(pla <= 0):
        raise ValueError("ratios need positive values")
    logs = np.log(enc / pla)
    n = len(logs)
    mean = float(np.mean(logs))
    if n < 2:
        return RatioEstimate(n, math.exp(mean), -math.inf, math.inf, confidence)
    sem = float(np.std(logs, ddof=1)) / math.sqrt(n)
    t = t_quantile(n - 1, confidence)
    return RatioEstimate(
        n, math.exp(mean), math.exp(mean - t * sem), math.exp(mean + t * sem), confidence
    )


def rounds_needed(estimate: RatioEstimate, target_pct: float) -> int:
    """About how many more rounds bring the half-width to the target (width ∝ 1/√n)."""
    hw = estimate.halfwidth_pct
    if not math.isfinite(hw):
        return max(1, 3 - estimate.n)
    if hw <= target_pct:
        return 0
    # The tolerance keeps float noise (6.0000000001%) from asking for one more round.
    total = math.ceil(estimate.n * (hw / target_pct) ** 2 - 1e-9)
    return max(1, total - estimate.n)


def verdict(estimate: RatioEstimate, target_pct: float, direction: Direction) -> str:
    """The result in words, e.g. '8.1% slower (95% CI 6.0–10.2%)'."""
    if not math.isfinite(estimate.halfwidth_pct):
        return "inconclusive: fewer than 2 rounds"
    pct = (estimate.ratio - 1.0) * 100.0
    low, high = (estimate.ci_low - 1.0) * 100.0, (estimate.ci_high - 1.0) * 100.0
    conf = f"{estimate.confidence * 100:.0f}% CI"
    if estimate.significant:
        if direction == "higher_is_better":
            word = "slower" if pct < 0 else "faster"
        else:
            word = "higher" if pct > 0 else "lower"
        a, b = sorted((abs(low), abs(high)))
        return f"{abs(pct):.1f}% {word} ({conf} {a:.1f}–{b:.1f}%)"
    hw = estimate.halfwidth_pct
    if hw <= target_pct:
        return f"no measurable difference (±{hw:.1f}%)"
    more = rounds_needed(estimate, target_pct)
    return f"inconclusive: noise ±{hw:.1f}%, about {more} more rounds needed"


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
    """The standard error of ln(ratio) behind a paired_ratio interval: that interval is
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
