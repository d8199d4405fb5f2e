"""What scope all adds to scope tables (studies/at_rest/scopes_section.py): per cell measured
at both scopes, all's cost minus tables', with claims.py's interval; absent for one scope."""

from __future__ import annotations

import math

import pytest

from encbench.studies.at_rest import claims, scopes_section
from encbench.studies.at_rest.models import AtRestCell
from tests import test_claims

Z = claims.Z95


def cell(scope: str, threads: int, ratio: float, half: float) -> AtRestCell:
    return test_claims.cell("oltp_write_only", threads, ratio, half, scope, "AES_CTR")


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
