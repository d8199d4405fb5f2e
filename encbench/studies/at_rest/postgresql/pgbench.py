"""pgbench against one server of the pair: its built-in TPC-B-like script (the default) or
select-only (-S), a thread per client, over the server's private socket as the administrator
(the tables are the administrator's: pgbench -i made them).  The report's figures are read
as every study reads them (workloads/pgbench_report.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from encbench.studies.at_rest.postgresql.records import PgAtRestCell
from encbench.workloads import pgbench_report
from encbench.workloads.pgbench_report import PgbenchResult

DATABASE = "encbench"
# The workloads that write (TPC-B-like updates three tables and inserts into a fourth).
WRITES = frozenset({"tpcb_like"})


def argv(program: str, cell: PgAtRestCell, seconds: int) -> list[str]:
    """No vacuum before the run (-n): the tables were vacuumed once, after loading."""
    args = [program, "-n", "-T", str(seconds), "-c", str(cell.clients), "-j", str(cell.clients)]
    if cell.workload == "select_only":
        args.append("-S")
    return [*args, DATABASE]


def init_argv(program: str, scale: int) -> list[str]:
    """pgbench -i: its four tables at `scale`, vacuumed, with their primary keys."""
    return [program, "-i", "-q", "-s", str(scale), DATABASE]


def run(
    program: str, cell: PgAtRestCell, seconds: int, env: Mapping[str, str], log: Path
) -> PgbenchResult:
    """One pgbench run, its whole output kept in `log`; a failing pgbench, or a report
    without figures, raises ToolError with the end of it."""
    return pgbench_report.run(argv(program, cell, seconds), cell.label, seconds, env, log, False)
