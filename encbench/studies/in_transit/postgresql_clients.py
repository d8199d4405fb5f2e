"""PostgreSQL's clients in the in-transit study, each run once over one route, as a cell
asks for them: pgbench (its command line servers/postgresql/pgbench.py's, its report read by
workloads/pgbench_report.py), whose tps is its own — with -C it includes every connection's
set-up, which is what a connect test measures; and the copy test's psql streaming the bulk
table (servers/postgresql/copy_table.py), a copy its transaction: copies per second times
the stream's bytes is MiB/s, and the cost of TLS is the same share of either."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from encbench.servers.postgresql import copy_table
from encbench.servers.postgresql import pgbench as pgbench_argv
from encbench.studies.in_transit.records import TransitCell
from encbench.workloads import pgbench_report
from encbench.workloads.pgbench_report import PgbenchResult as PgbenchResult
from encbench.workloads.pgbench_report import parse as parse


def argv(cell: TransitCell, seconds: int, select1: Path) -> list[str]:
    """pgbench's command line for one run of the cell: -C for the connect tests, `select1`
    (SELECT 1) for connect_select1, else select-only."""
    select1_test = cell.test == "connect_select1"
    return pgbench_argv.run_argv(
        seconds,
        cell.threads,
        select_only=not select1_test,
        connect=cell.connects,
        script=select1 if select1_test else None,
    )


def pgbench(
    cell: TransitCell,
    seconds: int,
    select1: Path,
    env: Mapping[str, str],
    log: Path,
    prefix: Sequence[str] = (),
) -> PgbenchResult:
    """One pgbench run (on the client's host: `prefix`, a namespace's exec prefix), its whole
    output kept in `log`; a failing pgbench, or a report without figures, raises ToolError
    with the end of it."""
    argv_here = [*prefix, *argv(cell, seconds, select1)]
    return pgbench_report.run(argv_here, cell.label, seconds, env, log, cell.connects)


def copy(
    seconds: int, env: Mapping[str, str], log: Path, stream_bytes: int, prefix: Sequence[str] = ()
) -> PgbenchResult:
    """Copies of the bulk table for `seconds` (servers/postgresql/copy_table.py), as a
    pgbench run's figures: a copy is a transaction."""
    copies, elapsed = copy_table.copy(seconds, env, log, stream_bytes, prefix)
    return PgbenchResult(
        transactions=copies,
        failed=0,
        tps=copies / elapsed,
        latency_avg_ms=1000 * elapsed / copies,
        connection_ms=0.0,
    )
