"""pgbench, run once over one route (its report read by workloads/pgbench_report.py).  The
tps is pgbench's own: with -C it includes every connection's set-up, which is what a connect
test measures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from encbench.studies.in_transit.postgresql.records import PgTransitCell
from encbench.workloads import pgbench_report
from encbench.workloads.pgbench_report import PgbenchResult as PgbenchResult
from encbench.workloads.pgbench_report import parse as parse

# The trivial transaction of connect_select1.
SELECT1_SCRIPT = "SELECT 1;\n"


def argv(program: str, cell: PgTransitCell, seconds: int, select1: Path) -> list[str]:
    """pgbench's command line for one run of the cell: a thread per client (each client's
    connections are its thread's own work), no vacuum first, -C for the connect tests."""
    args = [program, "-n", "-T", str(seconds), "-c", str(cell.clients), "-j", str(cell.clients)]
    if cell.connects:
        args.append("-C")
    if cell.test == "connect_select1":
        args += ["-f", str(select1)]
    else:
        args.append("-S")
    return args


def run(
    program: str,
    cell: PgTransitCell,
    seconds: int,
    select1: Path,
    env: Mapping[str, str],
    log: Path,
    prefix: Sequence[str] = (),
) -> PgbenchResult:
    """One pgbench run (on the client's host: `prefix`, a namespace's exec prefix), its whole
    output kept in `log`; a failing pgbench, or a report without figures, raises ToolError
    with the end of it."""
    argv_here = [*prefix, *argv(program, cell, seconds, select1)]
    return pgbench_report.run(argv_here, cell.label, seconds, env, log, cell.connects)
