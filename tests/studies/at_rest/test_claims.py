"""The seed's two claims as contrasts of cells' costs (report/claims.py), against a hand
computation."""

from __future__ import annotations

import math

import pytest

from encbench.report.models import Estimate
from encbench.studies.at_rest import claims
from encbench.studies.at_rest.models import AtRestCell

Z = claims.Z95


def cell(
    workload: str, threads: int, ratio: float, half: float, scope: str = "", algorithm: str = ""
) -> AtRestCell:
    """A measured cell whose TPS ratio is `ratio`, interval ratio·e^(±half) in log terms (of
    a configuration where `scope` and `algorithm` are given)."""
    low, high = ratio * math.exp(-half), ratio * math.exp(half)
    tps = Estimate(
        n=6, ratio=ratio, ci_low=low, ci_high=high, halfwidth_pct=half * 100,
        overhead_pct=(1 - ratio) * 100, overhead_ci_pct=((1 - high) * 100, (1 - low) * 100),
        verdict="", kind="cost",
    )  # fmt: skip
    return AtRestCell(
        workload=workload, regime="io-bound", threads=threads, scope=scope,
        algorithm=algorithm, rounds=12, measured_s=10, status="", comparisons={"tps": tps},
    )  # fmt: skip


def test_writes_against_reads_is_the_difference_of_mean_costs_with_independent_errors() -> None:
    cells = [
        cell("oltp_read_only", 1, 0.98, 0.02),
        cell("oltp_read_only", 64, 0.99, 0.02),
        cell("oltp_write_only", 1, 0.80, 0.04),
        cell("oltp_write_only", 64, 0.95, 0.04),
        cell("oltp_read_write", 1, 0.5, 0.01),  # a mix: in neither group
    ]
    found, left_out = claims.claims(cells)
    assert left_out == 0
    writes = found[0]
    assert writes.compared == "oltp_write_only vs reads" and writes.cells == (2, 2)
    d = (-math.log(0.80) - math.log(0.95)) / 2 - (-math.log(0.98) - math.log(0.99)) / 2
    se = math.sqrt(2 * (0.04 / Z) ** 2 / 4 + 2 * (0.02 / Z) ** 2 / 4)
    assert writes.difference == pytest.approx(100 * d)
    assert writes.ci == pytest.approx((100 * (d - Z * se), 100 * (d + Z * se)))
    assert writes.verdict == "holds"


def test_low_against_high_concurrency_per_workload_then_all_together() -> None:
    cells = [
        cell("oltp_write_only", 1, 0.80, 0.04),
        cell("oltp_write_only", 4, 0.90, 0.04),
        cell("oltp_write_only", 64, 0.95, 0.04),
        cell("oltp_read_only", 1, 0.99, 0.05),
        cell("oltp_read_only", 64, 0.98, 0.05),
    ]
    found, _ = claims.claims(cells)
    concurrency = [c for c in found if c.claim == claims.CONCURRENCY_CLAIM]
    assert [c.compared for c in concurrency] == [
        "oltp_write_only, io-bound: 1 vs 64 threads",
        "oltp_read_only, io-bound: 1 vs 64 threads",
        "all workloads: fewest vs most threads",
    ]
    assert concurrency[0].verdict == "holds"
    # a 1-point difference inside ±7 points of noise: only a bound, the interval's farther end
    low, high = concurrency[1].ci
    assert low < 0 < high and concurrency[1].kind == "unsure"
    assert concurrency[1].verdict == f"no difference beyond ±{max(-low, high):.1f} points"


def test_a_reversed_claim_is_called_reversed_and_cells_without_an_interval_are_left_out() -> None:
    cells = [
        cell("oltp_read_only", 1, 0.80, 0.02),
        cell("oltp_update_index", 1, 0.99, 0.02),
    ]
    unmeasured = cell("oltp_insert", 1, 0.5, 0.01)
    tps = unmeasured.comparisons["tps"].model_copy(update={"ci_low": None, "ci_high": None})
    cells.append(unmeasured.model_copy(update={"comparisons": {"tps": tps}}))
    found, left_out = claims.claims(cells)
    assert left_out == 1
    assert [c.compared for c in found] == ["oltp_update_index vs reads"]
    assert found[0].verdict == "reversed" and found[0].kind == "gain"


def test_the_claims_are_tested_in_server_cpu_per_transaction_too_where_more_is_the_cost() -> None:
    def with_cpu(c: AtRestCell, ratio: float, half: float) -> AtRestCell:
        cpu = c.comparisons["tps"].model_copy(
            update={"ratio": ratio, "ci_low": ratio * math.exp(-half),
                    "ci_high": ratio * math.exp(half)}
        )  # fmt: skip
        return c.model_copy(update={"comparisons": {**c.comparisons, "cpu_ms_per_txn": cpu}})

    cells = [
        with_cpu(cell("oltp_read_only", 1, 0.90, 0.02), 1.10, 0.02),
        with_cpu(cell("oltp_update_index", 1, 0.95, 0.50), 1.25, 0.03),
    ]
    by_tps, _ = claims.claims(cells)
    by_cpu, left_out = claims.claims(cells, "cpu_ms_per_txn")
    assert left_out == 0 and [c.metric for c in by_cpu] == ["cpu_ms_per_txn"]
    # In TPS the write costs less and its noise hides which; in CPU it costs more, clearly.
    assert by_tps[0].verdict.startswith("no difference beyond ±")
    assert by_cpu[0].difference == pytest.approx(100 * (math.log(1.25) - math.log(1.10)))
    assert by_cpu[0].verdict == "holds"


def test_in_words_ends_each_claim_with_its_pooled_contrast_per_metric() -> None:
    cells = [
        cell("oltp_read_only", 1, 0.98, 0.02),
        cell("oltp_read_only", 64, 0.99, 0.02),
        cell("oltp_write_only", 1, 0.80, 0.04),
        cell("oltp_write_only", 64, 0.95, 0.04),
        cell("oltp_update_index", 1, 0.99, 0.30),
        cell("oltp_update_index", 64, 0.99, 0.30),
    ]
    found, _ = claims.claims(cells)
    lines = claims.in_words(found)
    assert len(lines) == 2
    pooled = next(c for c in found if c.compared == "all writes vs reads")
    assert lines[0].startswith("**Writes cost more than reads**: in TPS, " + pooled.verdict)
    assert "all workloads: fewest vs most threads" in lines[1]
