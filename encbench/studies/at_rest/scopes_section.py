"""The report's "What scope all adds": where a run measured both encryption scopes — tables
(the tablespaces alone) and all (the logs as well: MariaDB's redo log, temporary tables and
files and binary log; MySQL's redo and undo logs and binary log) — each against its own
plain twin, what the logs add on top of the tables.

Per workload, regime and thread count (and algorithm, where that varies): scope all's cost
minus scope tables', in throughput and in server CPU per transaction, with the interval of
claims.py (each cell's error from its own 95% interval, the two cells independent: each
scope is measured by its own pairs of servers, so no round pairs all with tables directly).
MariaDB's tracker measured redo log encryption alone at about 7.5% of throughput at 20
threads (MDEV-36024): the figure this difference is read beside.  A run of one scope gets
no such section.
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
    "and undo logs and the binary log). Each was measured against its own plain twin; the "
    "difference of the two costs is what the logs add. MariaDB's own tracker measured redo log "
    "encryption at about 7.5% of throughput at 20 threads (MDEV-36024)."
)
METHOD = (
    "Cost = −ln(encrypted/plain TPS) ×100, or ln(encrypted/plain server CPU per transaction) "
    "×100 (≈ the overhead in %); the difference is scope all's cost minus scope tables' at "
    "the same workload, regime and threads, its 95% interval from the two cells' own "
    "intervals (as if normal, independent: each scope has its own pairs of servers). Above "
    "0 the logs cost; an interval holding 0 bounds what they add."
)


def _key(cell: AtRestCell) -> tuple[str, str, str, str, str, int]:
    """Everything of a cell but its scope: the twin scope all is compared with."""
    return (cell.workload, cell.regime, cell.algorithm, cell.layer, cell.shape, cell.threads)


def logs_added(cells: Sequence[AtRestCell]) -> list[Contrast]:
    """Per metric and per cell measured at both scopes: all minus tables."""
    out = []
    for metric in MEASURES:
        by_scope: dict[str, dict[tuple[str, str, str, str, str, int], AtRestCell]] = {}
        for c in cells:
            if c.scope in ("tables", "all") and c.rounds:
                by_scope.setdefault(c.scope, {})[_key(c)] = c
        both = [k for k in by_scope.get("all", {}) if k in by_scope.get("tables", {})]
        for k in both:
            a = cell_cost(by_scope["all"][k], metric)
            b = cell_cost(by_scope["tables"][k], metric)
            if a is None or b is None:
                continue
            workload, regime, algorithm, layer, shape, threads = k
            where = ", ".join(x for x in (workload, regime, algorithm, layer, shape) if x)
            compared = f"{where}, {threads} thread{'' if threads == 1 else 's'}"
            out.append(contrast(CLAIM, compared, [a], [b], metric))
    return out


def section(cells: Sequence[AtRestCell]) -> Section | None:
    found = logs_added(cells)
    if not found:
        return None
    rows = [
        row(
            MEASURES[c.metric],
            c.compared,
            f"{c.difference:+.1f} ({c.ci[0]:+.1f} … {c.ci[1]:+.1f})",
            c.verdict.replace("holds", "the logs cost").replace("reversed", "scope all cheaper"),
            styles={3: c.kind},
        )
        for c in found
    ]
    header = ["in", "cell", "scope all minus scope tables, points (95% CI)", "verdict"]
    costly = [c for c in found if c.kind == "cost"]
    told = (
        "Beyond the noise, the logs cost "
        + "; ".join(
            f"{c.difference:+.1f} points in {MEASURES[c.metric]} ({c.compared})" for c in costly
        )
        + "."
        if costly
        else "In no cell do the logs cost beyond the noise; each row bounds what they add."
    )
    blocks: list[Paragraph | Table] = [Paragraph(INTRO), Paragraph(told)]
    blocks.append(Table(header, rows, notes=[METHOD]))
    return Section(TITLE, blocks)
