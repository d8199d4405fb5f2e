"""pgbench, run once over one route (its report read by workloads/pgbench_report.py).  The
tps is pgbench's own: with -C it includes every connection's set-up, which is what a connect
test measures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from encbench import proc
from encbench.studies.in_transit.postgresql.records import PgTransitCell
from encbench.workloads.pgbench_report import GRACE_S as GRACE_S
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
    output kept in `log`; a failing pgbench raises ToolError with the end of it, a report
    without figures ValueError."""
    out = proc.run(
        [*prefix, *argv(program, cell, seconds, select1)],
        phase=f"pgbench, {cell.label}",
        timeout_s=seconds + GRACE_S,
        stdout_path=log,
        env=env,
        hint=f"its output is in {log}",
    )
    return parse(out.stdout, cell.connects)
