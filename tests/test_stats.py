"""Paired-ratio statistics against values worked out by hand."""

import math

import numpy as np
import pytest

from encbench import stats


def test_geometric_mean_ratio_and_t_interval_match_hand_computation() -> None:
    enc = [90.0, 95.0, 92.0, 93.0]
    logs = [math.log(x / 100.0) for x in enc]
    est = stats.t_ratio(logs, widen=False)
    mean = sum(logs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 3)
    t_975_df3 = 3.182446305284263  # Student t quantile, tabulated
    assert est.n == 4
    assert est.ratio == pytest.approx(math.exp(mean))
    assert est.ci_low == pytest.approx(math.exp(mean - t_975_df3 * sd / 2))
    assert est.ci_high == pytest.approx(math.exp(mean + t_975_df3 * sd / 2))
    assert est.significant


def test_identical_ratios_give_a_zero_width_interval() -> None:
    est = stats.t_ratio([math.log(1.1)] * 3)
    assert est.ratio == pytest.approx(1.1)
    assert est.halfwidth_pct == pytest.approx(0.0, abs=1e-9)


def test_one_block_has_no_interval() -> None:
    for est in (stats.t_ratio([math.log(0.5)]), stats.hodges_lehmann([math.log(0.5)])):
        assert not math.isfinite(est.halfwidth_pct)
        assert stats.verdict(est, "higher_is_better") == stats.NO_INTERVAL
        assert "no difference" not in stats.NO_INTERVAL


def test_no_values_are_refused() -> None:
    with pytest.raises(ValueError):
        stats.t_ratio([])
    with pytest.raises(ValueError):
        stats.hodges_lehmann([])


def test_verdict_says_slower_with_the_interval_in_percent() -> None:
    est = stats.RatioEstimate(n=10, ratio=0.919, ci_low=0.898, ci_high=0.940)
    assert stats.verdict(est, "higher_is_better") == "8.1% slower (95% CI 6.0–10.2%)"


def test_verdict_says_higher_for_a_cost_metric() -> None:
    est = stats.RatioEstimate(n=10, ratio=1.05, ci_low=1.02, ci_high=1.08)
    assert stats.verdict(est, "lower_is_better") == "5.0% higher (95% CI 2.0–8.0%)"


def test_verdict_says_longer_or_shorter_for_a_time() -> None:
    words = ("longer", "shorter")
    est = stats.RatioEstimate(n=10, ratio=1.05, ci_low=1.02, ci_high=1.08)
    assert stats.verdict(est, "lower_is_better", more_less=words) == (
        "5.0% longer (95% CI 2.0–8.0%)"
    )
    faster = stats.RatioEstimate(n=10, ratio=0.9, ci_low=0.85, ci_high=0.95)
    assert stats.verdict(faster, "lower_is_better", more_less=words).startswith("10.0% shorter")


def test_no_difference_beyond_the_margin_only_when_the_90_interval_is_inside_it() -> None:
    primary = stats.RatioEstimate(n=10, ratio=1.0, ci_low=0.985, ci_high=1.015)
    inside = stats.RatioEstimate(n=10, ratio=1.0, ci_low=0.989, ci_high=1.011, confidence=0.9)
    assert stats.verdict(primary, "higher_is_better", inside, 2.0) == (
        "no difference beyond ±2% (90% CI -1.1…+1.1%)"
    )
    # Lopsided, the 90% interval is shown as a cost: fewer TPS is a positive cost.
    lopsided = stats.RatioEstimate(n=10, ratio=1.0, ci_low=0.99, ci_high=1.005, confidence=0.9)
    assert stats.verdict(primary, "higher_is_better", lopsided, 2.0) == (
        "no difference beyond ±2% (90% CI -0.5…+1.0%)"
    )
    assert stats.kind(primary, stats.equivalent(inside, 2.0), "higher_is_better") == "same"


def test_a_narrow_interval_around_one_is_not_equivalence_when_it_crosses_the_margin() -> None:
    # The example: 0.982 ± 1.9% still allows a 3.6% slowdown.
    primary = stats.RatioEstimate(n=10, ratio=0.982, ci_low=0.964, ci_high=1.001)
    ninety = stats.RatioEstimate(n=10, ratio=0.982, ci_low=0.967, ci_high=0.998, confidence=0.9)
    assert not stats.equivalent(ninety, 2.0)
    # In the overhead's sign: TPS 0.964…1.001 of plain is a cost of −0.1…+3.6%.
    assert stats.verdict(primary, "higher_is_better", ninety, 2.0) == (
        "no difference detected (95% CI -0.1…+3.6%)"
    )
    _, low, high = stats.overhead_pct(primary, "higher_is_better")
    assert f"{low:+.1f}…{high:+.1f}%" in stats.verdict(primary, "higher_is_better", ninety, 2.0)
    assert stats.kind(primary, False, "higher_is_better") == "unsure"


def test_a_lower_is_better_interval_keeps_its_sign_in_the_verdict() -> None:
    # CPU 0.97…1.05 of plain: a cost of −3.0…+5.0%, the same numbers as the overhead column.
    cpu = stats.RatioEstimate(n=10, ratio=1.01, ci_low=0.97, ci_high=1.05)
    assert stats.verdict(cpu, "lower_is_better") == "no difference detected (95% CI -3.0…+5.0%)"


def test_the_signed_rank_distribution_matches_the_tables() -> None:
    # n = 10: P(T+ ≤ 8) = 25/1024, P(T+ ≤ 9) = 33/1024 (Hollander & Wolfe, table A.4).
    cdf = stats.signed_rank_cdf(10)
    assert cdf[8] == pytest.approx(25 / 1024)
    assert cdf[9] == pytest.approx(33 / 1024)
    assert cdf[-1] == pytest.approx(1.0)
    # So the 95% interval is [W(9), W(47)]; six is the fewest values with any 95% interval.
    assert stats.signed_rank_k(10, 0.95) == 9
    assert stats.signed_rank_k(6, 0.95) == 1
    assert stats.signed_rank_k(5, 0.95) == 0


def test_the_normal_approximation_takes_over_smoothly_for_many_blocks() -> None:
    n = stats.EXACT_SIGNED_RANK_MAX_N
    exact, normal = stats.signed_rank_cdf(n), stats.signed_rank_cdf(n + 1)
    # The same quantile, a unit apart, agrees to a fraction of a percent.
    q = lambda cdf: int(np.searchsorted(cdf, 0.025)) / (len(cdf) - 1)  # noqa: E731
    assert q(exact) == pytest.approx(q(normal), abs=0.002)


def test_hodges_lehmann_is_the_median_of_walsh_averages_with_the_tabled_interval() -> None:
    logs = [0.05, -0.02, 0.11, 0.03, 0.07, 0.01]
    walsh = sorted((a + b) / 2 for i, a in enumerate(logs) for b in logs[i:])
    est = stats.hodges_lehmann(logs, widen=False)
    assert est.n == 6
    assert est.ratio == pytest.approx(math.exp(float(np.median(walsh))))
    # n = 6: k = 1, so the interval runs from the smallest to the largest Walsh average.
    assert est.ci_low == pytest.approx(math.exp(walsh[0]))
    assert est.ci_high == pytest.approx(math.exp(walsh[-1]))


def test_the_p_value_is_the_exact_signed_rank_tests() -> None:
    from scipy.stats import wilcoxon

    rng = np.random.default_rng(7)
    for n in (6, 11, 30):
        logs = rng.normal(0.02, 0.05, n)
        est = stats.hodges_lehmann(logs, widen=False)
        assert est.p_value == pytest.approx(wilcoxon(logs, method="exact").pvalue)


def test_p_value_and_interval_agree_even_when_widened() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(6, 40))
        logs = np.cumsum(rng.normal(0, 0.02, n)) * 0.3 + rng.normal(0.01, 0.03, n)
        est = stats.hodges_lehmann(logs)
        assert est.p_value is not None
        assert (est.p_value < 0.05) == est.significant


def test_a_positively_autocorrelated_series_widens_the_interval() -> None:
    # Two halves: mean 0, Σ d_t·d_t+1 = 3 − 1 + 3 = 5 over Σ d² = 8: r = 5/8; plus Kendall's
    # bias (1 + 4r)/n = 3.5/8 gives 1.06, clipped to 0.8: f = √(1.8/0.2) = 3.
    series = [1.0] * 4 + [-1.0] * 4
    assert stats.lag1_autocorrelation(series) == pytest.approx(5 / 8)
    r, f = stats.widening(series)
    assert (r, f) == pytest.approx((0.8, 3.0))
    # An alternating series (negative r, even after the bias) does not narrow anything.
    assert stats.widening([1.0, -1.0] * 8) == (0.0, 1.0)
    plain = stats.t_ratio(series, widen=False)
    wide = stats.t_ratio(series)
    assert math.log(wide.ci_high) == pytest.approx(3.0 * math.log(plain.ci_high))


def test_block_widening_comes_from_the_rounds_with_the_order_effect_removed() -> None:
    # Rounds alternate A B / B A; an order effect of ±1 alone is no autocorrelation.
    order = [True, False] * 8
    assert stats.block_widening([1.0 if o else -1.0 for o in order], order) == (0.0, 1.0)
    # A slow drift is: 16 rounds, first half +1, second −1 (each order's mean is 0):
    # r = (7 − 1 + 7)/16 = 13/16, plus bias (1 + 4r)/16, clipped to 0.8: f = √(1/0.2).
    drift = [1.0] * 8 + [-1.0] * 8
    assert stats.block_widening(drift, order) == pytest.approx((0.8, math.sqrt(5.0)))
    weak = [0.0, 0.1] * 4 + [0.0, -0.1] * 4
    r, f = stats.block_widening(weak, order)
    assert 0.0 <= r < 0.8 and f == pytest.approx(math.sqrt(1 / (1 - r)))


def test_steins_guard_keeps_stage_ones_spread_in_the_final_interval() -> None:
    narrow = stats.RatioEstimate(24, 0.9, 0.895, 0.905, p_value=1e-9)
    stage_one = stats.RatioEstimate(6, 0.9, 0.8, 1.0125, p_value=0.06)
    guarded = stats.stein_guard(narrow, stage_one, 24)
    half = (math.log(1.0125) - math.log(0.9)) * math.sqrt(6 / 24)
    assert guarded.ci_high == pytest.approx(math.exp(math.log(0.9) + half))
    assert guarded.ci_low == pytest.approx(math.exp(math.log(0.9) - half))
    assert guarded.p_value is not None and guarded.p_value > 1e-9
    assert (guarded.p_value < 0.05) == guarded.significant
    wide = stats.RatioEstimate(24, 0.9, 0.7, 1.1, p_value=0.3)
    assert stats.stein_guard(wide, stage_one, 24).ci_low == 0.7, "never narrows"


def test_holm_rejects_step_down_until_the_first_that_fails() -> None:
    # Sorted: 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: stop.
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    assert stats.holm([]) == []


def test_holm_thresholds_are_each_rejections_step_and_the_step_where_it_stopped() -> None:
    # Rejected: 0.005 at 0.05/4, 0.01 at 0.05/3; the rest would each have had to pass the
    # step where it stopped, 0.05/2.
    thresholds = stats.holm_thresholds([0.01, 0.04, 0.03, 0.005])
    assert thresholds == pytest.approx([0.05 / 3, 0.05 / 2, 0.05 / 2, 0.05 / 4])
    # With the others as they are, a cell not rejected would be exactly when its p is within
    # its threshold.
    for i in (1, 2):
        limit = thresholds[i]
        for p in (limit * 0.999, limit * 1.001):
            ps = [0.01, 0.04, 0.03, 0.005]
            ps[i] = p
            assert stats.holm(ps)[i] == (p <= limit), (i, p)
    assert stats.holm_thresholds([0.5]) == [0.05]


def test_few_blocks_cannot_reach_a_small_p_value() -> None:
    # Every block on one side: the exact signed-rank p-value, two-sided, is 2/2ⁿ.
    for n in (6, 7, 8):
        est = stats.hodges_lehmann([0.05 + 0.001 * i for i in range(n)], widen=False)
        assert est.p_value == pytest.approx(stats.p_floor(n))
    assert stats.p_floor(7) == pytest.approx(0.015625)
    # Holm's 0.05/4 = 0.0125 needs 8 blocks (2/256 = 0.0078); 7 give no less than 0.0156.
    assert stats.blocks_to_reach(0.0125) == 8
    assert (
        stats.p_floor(stats.blocks_to_reach(0.001))
        <= 0.001
        < stats.p_floor(stats.blocks_to_reach(0.001) - 1)
    )


def test_an_interval_needs_six_blocks() -> None:
    assert stats.fewest_blocks_for_interval(0.95) == 6
    assert stats.signed_rank_k(stats.fewest_blocks_for_interval(0.90), 0.90) >= 1


def test_overhead_is_positive_when_encryption_costs() -> None:
    est = stats.RatioEstimate(n=5, ratio=0.9, ci_low=0.85, ci_high=0.95)
    over, low, high = stats.overhead_pct(est, "higher_is_better")
    assert (over, low, high) == pytest.approx((10.0, 5.0, 15.0))
    cost = stats.RatioEstimate(n=5, ratio=1.1, ci_low=1.05, ci_high=1.15)
    assert stats.overhead_pct(cost, "lower_is_better") == pytest.approx((10.0, 5.0, 15.0))


# Student-t 0.975 quantiles from the tables, for 3, 4, 9 and 13 degrees of freedom.
T3, T4, T9, T13 = 3.182446305, 2.776445105, 2.262157163, 2.160368656


def test_t_quantiles_match_the_tables() -> None:
    for df, t in ((3, T3), (4, T4), (9, T9), (13, T13)):
        assert stats.t_quantile(df) == pytest.approx(t, rel=1e-9)


def test_mean_ci_is_mean_plus_minus_t_times_standard_error() -> None:
    # 4 values, stdev 2: 10 ± t(3)·2/√4 = 10 ± 3.1824
    low, high = stats.mean_ci(10.0, 2.0, 4) or (0.0, 0.0)
    assert (low, high) == pytest.approx((10.0 - T3, 10.0 + T3))
    assert stats.mean_ci(10.0, 2.0, 1) is None


def estimate(ratio: float, se: float, n: int) -> stats.RatioEstimate:
    """A paired-ratio estimate whose log-scale CI is ln(ratio) ± t(n−1)·se."""
    t = {5: T4, 10: T9}[n]
    low, high = math.exp(math.log(ratio) - t * se), math.exp(math.log(ratio) + t * se)
    return stats.RatioEstimate(n, ratio, low, high)


def t_pdf(x: float, df: float) -> float:
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    return float(c * (1 + x * x / df) ** (-(df + 1) / 2))


def two_sided_p(t: float, df: float, steps: int = 4000) -> float:
    """1 − 2·∫₀^|t| pdf, by Simpson's rule: independent of scipy."""
    h = abs(t) / steps
    s = t_pdf(0, df) + t_pdf(abs(t), df)
    s += sum((4 if k % 2 else 2) * t_pdf(k * h, df) for k in range(1, steps))
    return 1 - 2 * s * h / 3


def test_each_sides_standard_error_is_recovered_from_its_ci() -> None:
    a, b = estimate(0.9, 0.02, 5), estimate(0.8, 0.03, 10)
    assert stats.log_se_from_ci(a.n, a.ci_low, a.ci_high) == pytest.approx(0.02, rel=1e-8)
    assert stats.log_se_from_ci(b.n, b.ci_low, b.ci_high) == pytest.approx(0.03, rel=1e-8)
    assert stats.log_se_from_ci(1, None, None) is None


def test_welch_gives_the_hand_computed_t_degrees_of_freedom_and_p() -> None:
    result = stats.welch_log_ratios(estimate(0.9, 0.02, 5), estimate(0.8, 0.03, 10))
    d = math.log(0.8 / 0.9)
    se = math.sqrt(0.02**2 + 0.03**2)
    # (0.0004 + 0.0009)² / (0.0004²/4 + 0.0009²/9) = 1.69e-6 / 1.3e-7 = 13
    assert result.df == pytest.approx(13.0, rel=1e-7)
    assert result.t == pytest.approx(d / se, rel=1e-7)
    assert result.t == pytest.approx(-3.26671, abs=1e-5)
    assert result.p == pytest.approx(two_sided_p(d / se, 13.0), abs=1e-8)
    assert stats.t_two_sided_p(d / se, 13.0) == pytest.approx(two_sided_p(d / se, 13.0), abs=1e-8)
    assert result.significant is True
    assert result.ratio_of_ratios_ci is not None
    low, high = result.ratio_of_ratios_ci
    assert low == pytest.approx(math.exp(d - T13 * se), rel=1e-7)
    assert high == pytest.approx(math.exp(d + T13 * se), rel=1e-7)


def test_overlapping_costs_are_not_a_significant_change() -> None:
    result = stats.welch_log_ratios(estimate(0.9, 0.02, 5), estimate(0.89, 0.03, 10))
    assert result.significant is False
    assert result.t is not None and result.df is not None
    assert result.p == pytest.approx(two_sided_p(result.t, result.df), abs=1e-8)


def test_a_side_with_one_round_cannot_be_tested() -> None:
    one = stats.RatioEstimate(1, 0.9, -math.inf, math.inf)
    result = stats.welch_log_ratios(one, estimate(0.8, 0.03, 10))
    assert result.significant is None
    assert result.note is not None and "fewer than 2 rounds" in result.note
