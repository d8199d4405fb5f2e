"""The report's tables across studies: where two studies measured the same question on
different servers (the same workload, memory regime and client threads: MariaDB's TDE,
MariaDB on fscrypt, PostgreSQL on fscrypt), their costs side by side in one table, a row a
key and a column a server.  Each study says which of its cells may stand there and under
what key (ReportPart.across); this module names no study."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report.cells import overhead_cell, verdict_marks
from encbench.report.parts import Across
from encbench.report.tables import Cell, Section, Table

NOTE = (
    "Each column's cost is measured against its own plain twin, in its own paired, "
    "interleaved rounds, and given with its 95% interval: compare the columns as costs, "
    "not as absolute throughput (the servers differ in what one transaction does)."
)


def tables(found: Sequence[Across]) -> list[Table]:
    """A table for each title that at least two columns share; rows that one column alone
    has are left out (the studies' own sections hold them)."""
    out = []
    for title in dict.fromkeys(a.table for a in found):
        mine = [a for a in found if a.table == title]
        columns = list(dict.fromkeys(a.column for a in mine))
        if len(columns) < 2:
            continue
        cells = {(a.key, a.column): a for a in mine}
        keys = [k for k in dict.fromkeys(a.key for a in mine)]
        shared = [k for k in keys if sum((k, c) in cells for c in columns) >= 2]
        if not shared:
            continue
        rows = []
        for key in shared:
            row = [Cell(part) for part in key]
            for column in columns:
                a = cells.get((key, column))
                if a is None:
                    row.append(Cell("–", "na"))
                else:
                    text = overhead_cell(a.estimate) + verdict_marks(a.estimate)
                    row.append(Cell(text, a.estimate.kind))
            rows.append(row)
        header = [*mine[0].key_names, *columns]
        out.append(Table(header, rows, caption=title, notes=[NOTE]))
    return out


def section(found: Sequence[Across]) -> Section | None:
    made = tables(found)
    if not made:
        return None
    return Section("Across servers", list(made))
