"""The report's "What scope all adds": where a run measured scope all against scope tables
— tables (the tablespaces alone) against all (the logs as well: MariaDB's redo log,
temporary tables and files and binary log; MySQL's redo and undo logs and binary log) — what
the logs add on top of the tables.

Two ways, per workload, regime and thread count (and algorithm, where that varies):
- paired: a cell of scope all against scope tables (server.encryption_against = "tables"),
  both servers encrypting their tables and only one its logs, round by round: its own cost
  and 95% interval are what the logs add;
- from two cells: scope all's cost against plain minus scope tables' against plain, with
  the interval of claims.py (each cell's error from its own 95% interval, the two cells
  independent: each scope is measured by its own pairs of servers), wider than a paired
  cell's.
MariaDB's tracker measured redo log encryption alone at about 7.5% of throughput at 20
threads (MDEV-36024): the figure either is read beside.  A run of one scope, against plain
alone, gets no such section.
"""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report.tables import Paragraph, Section, Table, row
from encbench.studies.at_rest.claims import MEASURES, Contrast, cell_cost, contrast
from encbench.studies.at_rest.models import AtRestCell

TITLE = "What scope all adds to scope tables"
CLAIM = "scope all costs more than scope tables"
INTRO = (
    "Scope tables encrypts the tablespaces; scope all adds the logs the server can encrypt "
    "(MariaDB: the redo log, temporary tables and files, the binary log; MySQL: the redo "
    "and undo logs and the binary log). Paired: scope all measured against scope tables "
    "round by round, both servers encrypting their tables. From two cells: each scope "
    "measured against its own plain twin, the difference of the two costs. MariaDB's own "
    "tracker measured redo log encryption at about 7.5% of throughput at 20 threads "
    "(MDEV-36024)."
)
METHOD = (
    "Cost = −ln(encrypted/plain TPS) ×100, or ln(encrypted/plain server CPU per transaction) "
    "×100 (≈ the overhead in %). Paired: scope all's cost against scope tables, with the "
    "cell's own 95% interval. From two cells: scope all's cost minus scope tables' at the "
    "same workload, regime and threads, its 95% interval from the two cells' own intervals "
    "(as if normal, independent: each scope has its own pairs of servers). Above 0 the logs "
    "cost; an interval holding 0 bounds what they add."
)
PAIRED = "paired"
FROM_TWO = "from two cells"


def _key(cell: AtRestCell) -> tuple[str, str, str, str, str, int]:
    """Everything of a cell but its scope: the twin scope all is compared with."""
    return (cell.workload, cell.regime, cell.algorithm, cell.layer, cell.shape, cell.threads)


def _compared(key: tuple[str, str, str, str, str, int]) -> str:
    workload, regime, algorithm, layer, shape, threads = key
    where = ", ".join(x for x in (workload, regime, algorithm, layer, shape) if x)
    return f"{where}, {threads} thread{'' if threads == 1 else 's'}"


def paired(cells: Sequence[AtRestCell]) -> list[Contrast]:
    """Per metric, each cell of scope all against scope tables with an interval: its own
    cost and interval (claims.cell_cost), in the difference's terms."""
    out = []
    for metric in MEASURES:
        for c in cells:
            cost = cell_cost(c, metric) if c.against == "tables" else None
            if cost is None:
                continue
            low, high = cost.ends
            compared = _compared(_key(c))
            out.append(
                Contrast(CLAIM, compared, 100 * cost.cost, (100 * low, 100 * high), (1, 0), metric)
            )
    return out


def logs_added(cells: Sequence[AtRestCell]) -> list[Contrast]:
    """Per metric and per cell measured at both scopes, each against plain: all minus
    tables."""
    out = []
    for metric in MEASURES:
        by_scope: dict[str, dict[tuple[str, str, str, str, str, int], AtRestCell]] = {}
        for c in cells:
            if c.scope in ("tables", "all") and c.rounds and not c.against:
                by_scope.setdefault(c.scope, {})[_key(c)] = c
        both = [k for k in by_scope.get("all", {}) if k in by_scope.get("tables", {})]
        for k in both:
            a = cell_cost(by_scope["all"][k], metric)
            b = cell_cost(by_scope["tables"][k], metric)
            if a is None or b is None:
                continue
            out.append(contrast(CLAIM, _compared(k), [a], [b], metric))
    return out


def section(cells: Sequence[AtRestCell]) -> Section | None:
    ways = [(PAIRED, c) for c in paired(cells)] + [(FROM_TWO, c) for c in logs_added(cells)]
    if not ways:
        return None
    # Each cell's rows together, the paired figure first.
    ways.sort(key=lambda w: (w[1].metric != "tps", w[1].compared, w[0] != PAIRED))
    rows = [
        row(
            MEASURES[c.metric],
            c.compared,
            how,
            f"{c.difference:+.1f} ({c.ci[0]:+.1f} … {c.ci[1]:+.1f})",
            c.verdict.replace("holds", "the logs cost").replace("reversed", "scope all cheaper"),
            styles={4: c.kind},
        )
        for how, c in ways
    ]
    header = ["in", "cell", "how", "what the logs add, points (95% CI)", "verdict"]
    costly = [(how, c) for how, c in ways if c.kind == "cost"]
    told = (
        "Beyond the noise, the logs cost "
        + "; ".join(
            f"{c.difference:+.1f} points in {MEASURES[c.metric]} ({c.compared}, {how})"
            for how, c in costly
        )
        + "."
        if costly
        else "In no cell do the logs cost beyond the noise; each row bounds what they add."
    )
    blocks: list[Paragraph | Table] = [Paragraph(INTRO), Paragraph(told)]
    blocks.append(Table(header, rows, notes=[METHOD]))
    return Section(TITLE, blocks)
