"""The report's table across studies: the same workload, regime and threads measured on
two servers stand in one row, a column each; a row one column alone has is left to its
study's own section, and a table with one column is not drawn."""

from __future__ import annotations

from encbench.engine.questions import AT_REST_KEY, AT_REST_TABLE
from encbench.report import across, markdown
from encbench.report.models import Estimate
from encbench.report.parts import Across
from encbench.report.tables import Document


def cost(pct: float, low: float, high: float) -> Estimate:
    ratio = 1 - pct / 100
    return Estimate(
        n=6,
        ratio=ratio,
        ci_low=1 - high / 100,
        ci_high=1 - low / 100,
        halfwidth_pct=None,
        overhead_pct=pct,
        overhead_ci_pct=(low, high),
        verdict=f"{pct:.1f}% slower",
        kind="cost",
    )


def at(workload: str, regime: str, threads: int, column: str, pct: float) -> Across:
    return Across(
        AT_REST_TABLE,
        AT_REST_KEY,
        (workload, regime, str(threads)),
        column,
        cost(pct, pct - 1, pct + 1),
    )


def test_the_same_cell_on_two_servers_is_one_row() -> None:
    found = [
        at("oltp_read_only", "io-bound", 1, "MariaDB: TDE AES_CTR, scope tables", 12.0),
        at("oltp_read_only", "io-bound", 1, "PostgreSQL: filesystem (fscrypt)", 30.0),
        at("oltp_read_only", "in-memory", 1, "MariaDB: TDE AES_CTR, scope tables", 1.0),
        at("oltp_read_only", "io-bound", 16, "MariaDB: filesystem (fscrypt)", 25.0),
        at("oltp_read_only", "io-bound", 16, "PostgreSQL: filesystem (fscrypt)", 28.0),
    ]
    (table,) = across.tables(found)
    assert list(table.header) == [
        "workload",
        "regime",
        "client threads",
        "MariaDB: TDE AES_CTR, scope tables",
        "PostgreSQL: filesystem (fscrypt)",
        "MariaDB: filesystem (fscrypt)",
    ]
    texts = [[c.text for c in r] for r in table.rows]
    # In memory only MariaDB's TDE measured it: its own section holds that row.
    assert [t[:3] for t in texts] == [
        ["oltp_read_only", "io-bound", "1"],
        ["oltp_read_only", "io-bound", "16"],
    ]
    assert texts[0][3:] == ["+12.0% (+11.0 … +13.0)", "+30.0% (+29.0 … +31.0)", "–"]
    assert texts[1][3:] == ["–", "+28.0% (+27.0 … +29.0)", "+25.0% (+24.0 … +26.0)"]
    section = across.section(found)
    assert section is not None
    page = markdown.render(Document("t", [section]))
    assert "## Across servers" in page and "own plain twin" in page


def test_one_server_alone_draws_no_table() -> None:
    found = [at("oltp_read_only", "io-bound", n, "MariaDB: TDE AES_CTR", 5.0) for n in (1, 16)]
    assert across.tables(found) == [] and across.section(found) is None
