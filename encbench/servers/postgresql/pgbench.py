"""pgbench's command lines, for every study that drives PostgreSQL with it: loading its
tables (`pgbench -i`) and one timed run.  Its report is read by workloads/pgbench_report.py."""

from __future__ import annotations

from pathlib import Path

from encbench.servers.postgresql.sandbox import program

# A transaction of one trivial statement: a connection's set-up is then the whole cost.
SELECT1_SCRIPT = "SELECT 1;\n"


def init_argv(scale: int, database: str | None = None, user: str | None = None) -> list[str]:
    """pgbench -i: its four tables at `scale`, vacuumed, with their primary keys (in
    `database` as `user` where given, else libpq's PG* settings say)."""
    args = [program("pgbench"), "-i", "-q", "-s", str(scale)]
    args += ["-U", user] if user else []
    return args + (["-d", database] if database else [])


def run_argv(
    seconds: int,
    clients: int,
    *,
    select_only: bool = False,
    connect: bool = False,
    script: Path | None = None,
    database: str | None = None,
) -> list[str]:
    """One timed run: a thread per client (each client's connections are its thread's own
    work), no vacuum first (-n: the tables were vacuumed once, after loading); TPC-B-like
    by default, select-only (-S) or `script`; with `connect`, a new connection per
    transaction (-C)."""
    args = [program("pgbench"), "-n", "-T", str(seconds), "-c", str(clients), "-j", str(clients)]
    args += ["-C"] if connect else []
    if script is not None:
        args += ["-f", str(script)]
    elif select_only:
        args.append("-S")
    return args + ([database] if database else [])
