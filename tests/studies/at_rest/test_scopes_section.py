"""What scope all adds to scope tables (studies/at_rest/scopes_section.py): per cell measured
at both scopes, all's cost minus tables', with claims.py's interval, and a paired cell's own
cost where scope all was measured against scope tables; absent for one scope."""

from __future__ import annotations

import math

import pytest

from encbench.report.tables import Paragraph, Table
from encbench.studies.at_rest import claims, scopes_section
from encbench.studies.at_rest.models import AtRestCell
from tests.studies.at_rest import test_claims

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


def test_a_paired_cell_gives_its_own_cost_and_interval_and_is_no_twin() -> None:
    """A cell of scope all against scope tables: its own cost is what the logs add, with its
    own interval; it is not scope all's twin against plain (it would pose as one: scope
    all, same workload and threads)."""
    paired = cell("all", 1, 0.95, 0.02).model_copy(update={"against": "tables"})
    cells = [cell("tables", 1, 0.97, 0.03), cell("all", 1, 0.88, 0.04), paired]
    found = scopes_section.paired(cells)
    assert [c.compared for c in found] == ["oltp_write_only, io-bound, AES_CTR, 1 thread"]
    assert found[0].difference == pytest.approx(-100 * math.log(0.95))
    assert found[0].ci == pytest.approx((100 * (-math.log(0.95) - 0.02),
                                         100 * (-math.log(0.95) + 0.02)))  # fmt: skip
    assert found[0].kind == "cost"
    # The difference of two cells still uses the two cells against plain, not the paired one.
    (two,) = scopes_section.logs_added(cells)
    assert two.difference == pytest.approx(100 * (-math.log(0.88) + math.log(0.97)))
    section = scopes_section.section(cells)
    assert section is not None
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [r[2].text for r in table.rows] == ["paired", "from two cells"]


def test_a_run_of_paired_cells_alone_has_the_section() -> None:
    paired = cell("all", 16, 1.0, 0.05).model_copy(update={"against": "tables"})
    section = scopes_section.section([paired])
    assert section is not None
    text = " ".join(b.text for b in section.blocks if isinstance(b, Paragraph))
    assert "In no cell do the logs cost beyond the noise" in text
