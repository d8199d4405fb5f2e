"""pgbench against one server of the pair: its built-in TPC-B-like script (the default) or
select-only (-S), a thread per client, over the server's private socket as the administrator
(the tables are the administrator's: pgbench -i made them).  The report's figures are read
as every study reads them (workloads/pgbench_report.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from encbench.servers.postgresql import pgbench as pgbench_argv
from encbench.studies.at_rest.records import CellKey
from encbench.workloads import pgbench_report
from encbench.workloads.pgbench_report import PgbenchResult

DATABASE = "encbench"
# The workloads that write (TPC-B-like updates three tables and inserts into a fourth).
WRITES = frozenset({"tpcb_like"})


def argv(cell: CellKey, seconds: int) -> list[str]:
    """The cell's run in the benchmark database: TPC-B-like, or select-only."""
    select_only = cell.workload == "select_only"
    return pgbench_argv.run_argv(seconds, cell.threads, select_only=select_only, database=DATABASE)


def init_argv(scale: int) -> list[str]:
    """pgbench -i: its four tables at `scale` in the benchmark database."""
    return pgbench_argv.init_argv(scale, DATABASE)


def run(cell: CellKey, seconds: int, env: Mapping[str, str], log: Path) -> PgbenchResult:
    """One pgbench run, its whole output kept in `log`; a failing pgbench, or a report
    without figures, raises ToolError with the end of it."""
    return pgbench_report.run(argv(cell, seconds), cell.label, seconds, env, log, False)
