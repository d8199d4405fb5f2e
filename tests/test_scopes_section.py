"""What scope all adds to scope tables (studies/at_rest/scopes_section.py): per cell measured
at both scopes, all's cost minus tables', with claims.py's interval; absent for one scope."""

from __future__ import annotations

import math

import pytest

from encbench.report.models import Estimate
from encbench.studies.at_rest import claims, scopes_section
from encbench.studies.at_rest.models import AtRestCell

Z = claims.Z95


def cell(scope: str, threads: int, ratio: float, half: float) -> AtRestCell:
    low, high = ratio * math.exp(-half), ratio * math.exp(half)
    tps = Estimate(
        n=6, ratio=ratio, ci_low=low, ci_high=high, halfwidth_pct=half * 100,
        overhead_pct=(1 - ratio) * 100, overhead_ci_pct=((1 - high) * 100, (1 - low) * 100),
        verdict="", kind="cost",
    )  # fmt: skip
    return AtRestCell(
        workload="oltp_write_only", regime="io-bound", threads=threads, scope=scope,
        algorithm="AES_CTR", rounds=12, measured_s=10, status="", comparisons={"tps": tps},
    )  # fmt: skip


def test_all_minus_tables_per_cell_with_both_errors() -> None:
    cells = [
        cell("tables", 1, 0.97, 0.03),
        cell("all", 1, 0.88, 0.04),
        cell("tables", 16, 0.91, 0.05),
        cell("all", 16, 0.95, 0.05),
        cell("all", 64, 0.90, 0.01),  # no scope-tables twin: no row
    ]
    found = scopes_section.logs_added(cells)
    assert [c.compared for c in found] == [
        "oltp_write_only, io-bound, AES_CTR, 1 thread",
        "oltp_write_only, io-bound, AES_CTR, 16 threads",
    ]
    d = -math.log(0.88) + math.log(0.97)
    se = math.hypot(0.04 / Z, 0.03 / Z)
    assert found[0].difference == pytest.approx(100 * d)
    assert found[0].ci == pytest.approx((100 * (d - Z * se), 100 * (d + Z * se)))
    assert found[0].kind == "cost"  # the logs cost at 1 thread
    assert found[1].verdict.startswith("no difference beyond ±")
    section = scopes_section.section(cells)
    assert section is not None and section.title == scopes_section.TITLE


def test_a_run_of_one_scope_has_no_such_section() -> None:
    assert scopes_section.section([cell("tables", 1, 0.97, 0.03)]) is None
