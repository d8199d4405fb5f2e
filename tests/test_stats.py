"""Paired-ratio statistics against values worked out by hand."""

import math

import pytest

from encbench import stats


def test_geometric_mean_ratio_and_t_interval_match_hand_computation() -> None:
    enc = [90.0, 95.0, 92.0, 93.0]
    plain = [100.0, 100.0, 100.0, 100.0]
    est = stats.paired_ratio(enc, plain)
    logs = [math.log(x / 100.0) for x in enc]
    mean = sum(logs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 3)
    t_975_df3 = 3.182446305284263  # Student t quantile, tabulated
    assert est.n == 4
    assert est.ratio == pytest.approx(math.exp(mean))
    assert est.ci_low == pytest.approx(math.exp(mean - t_975_df3 * sd / 2))
    assert est.ci_high == pytest.approx(math.exp(mean + t_975_df3 * sd / 2))
    assert est.significant


def test_identical_ratios_give_a_zero_width_interval() -> None:
    est = stats.paired_ratio([110.0, 220.0, 55.0], [100.0, 200.0, 50.0])
    assert est.ratio == pytest.approx(1.1)
    assert est.halfwidth_pct == pytest.approx(0.0, abs=1e-9)


def test_one_round_has_no_interval() -> None:
    est = stats.paired_ratio([1.0], [2.0])
    assert not math.isfinite(est.halfwidth_pct)
    assert stats.verdict(est, 2.0, "higher_is_better") == "inconclusive: fewer than 2 rounds"


def test_unequal_or_nonpositive_samples_are_refused() -> None:
    with pytest.raises(ValueError):
        stats.paired_ratio([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        stats.paired_ratio([0.0, 1.0], [1.0, 1.0])


def test_verdict_says_slower_with_the_interval_in_percent() -> None:
    est = stats.RatioEstimate(n=10, ratio=0.919, ci_low=0.898, ci_high=0.940)
    assert stats.verdict(est, 2.0, "higher_is_better") == "8.1% slower (95% CI 6.0–10.2%)"


def test_verdict_says_higher_for_a_cost_metric() -> None:
    est = stats.RatioEstimate(n=10, ratio=1.05, ci_low=1.02, ci_high=1.08)
    assert stats.verdict(est, 2.0, "lower_is_better") == "5.0% higher (95% CI 2.0–8.0%)"


def test_verdict_says_no_measurable_difference_when_tight_around_one() -> None:
    est = stats.RatioEstimate(n=10, ratio=1.0, ci_low=0.985, ci_high=1.015)
    assert stats.verdict(est, 2.0, "higher_is_better") == "no measurable difference (±1.5%)"


def test_verdict_says_inconclusive_with_rounds_needed() -> None:
    est = stats.RatioEstimate(n=4, ratio=1.0, ci_low=0.94, ci_high=1.06)
    # ±6% needs (6/2)² = 9 times the rounds: 36 in all, 32 more.
    assert stats.rounds_needed(est, 2.0) == 32
    assert stats.verdict(est, 2.0, "higher_is_better") == (
        "inconclusive: noise ±6.0%, about 32 more rounds needed"
    )


def test_overhead_is_positive_when_encryption_costs() -> None:
    est = stats.RatioEstimate(n=5, ratio=0.9, ci_low=0.85, ci_high=0.95)
    over, low, high = stats.overhead_pct(est, "higher_is_better")
    assert (over, low, high) == pytest.approx((10.0, 5.0, 15.0))
    cost = stats.RatioEstimate(n=5, ratio=1.1, ci_low=1.05, ci_high=1.15)
    assert stats.overhead_pct(cost, "lower_is_better") == pytest.approx((10.0, 5.0, 15.0))
