"""sysbench 1.0.20: building the command line for the stock OLTP scripts and parsing the
report it prints at the end of a run.

We parse sysbench's standard final report rather than installing a Lua report hook so that
the scripts run are exactly the stock ones users quote (/usr/share/sysbench/oltp_*.lua).  The
parser is tested on golden outputs of the real sysbench 1.0.20 (tests/golden/sysbench/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import ToolError

OLTP_WORKLOADS = (
    "oltp_read_only",
    "oltp_point_select",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
)
WRITE_WORKLOADS = frozenset({"oltp_read_write", "oltp_write_only", "oltp_update_index"})
INSTALL_HINT = "install it: apt-get install sysbench (or run `make setup`)"


@dataclass(frozen=True)
class Connection:
    """Where and as whom sysbench connects.  sysbench 1.0.20 takes a password only as
    --mysql-password on its command line, where every user of the machine can read it; so it
    connects over the sandbox's unix socket as the invoking OS user, whom MariaDB's
    unix_socket plugin authenticates without any password."""

    socket: Path
    user: str
    database: str


@dataclass(frozen=True)
class SysbenchResult:
    """One sysbench run's final report.  Units are in the names."""

    threads: int
    transactions: int
    tps: float
    queries: int
    qps: float
    ignored_errors: int
    reconnects: int
    total_time_s: float
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_p95_ms: float


_PATTERNS: dict[str, re.Pattern[str]] = {
    "threads": re.compile(r"^Number of threads:\s+(\d+)", re.M),
    "transactions": re.compile(r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.M),
    "queries": re.compile(r"^\s+queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.M),
    "ignored_errors": re.compile(r"^\s+ignored errors:\s+(\d+)", re.M),
    "reconnects": re.compile(r"^\s+reconnects:\s+(\d+)", re.M),
    "total_time": re.compile(r"^\s+total time:\s+([\d.]+)s", re.M),
    "lat_min": re.compile(r"^\s+min:\s+([\d.]+)", re.M),
    "lat_avg": re.compile(r"^\s+avg:\s+([\d.]+)", re.M),
    "lat_max": re.compile(r"^\s+max:\s+([\d.]+)", re.M),
    "lat_p95": re.compile(r"^\s+95th percentile:\s+([\d.]+)", re.M),
}
_FATAL = re.compile(r"^FATAL: (.*)$", re.M)


def parse_report(text: str) -> SysbenchResult:
    """Parse the final report of `sysbench <oltp script> run`.  Raises ToolError naming the
    first FATAL line when the run did not produce a report."""
    found: dict[str, re.Match[str]] = {}
    for key, pattern in _PATTERNS.items():
        match = pattern.search(text)
        if match is None:
            fatal = _FATAL.findall(text)
            reason = fatal[0] if fatal else f"no '{key}' line in its report"
            raise ToolError(f"sysbench produced no report: {reason}", phase="parse sysbench")
        found[key] = match
    return SysbenchResult(
        threads=int(found["threads"][1]),
        transactions=int(found["transactions"][1]),
        tps=float(found["transactions"][2]),
        queries=int(found["queries"][1]),
        qps=float(found["queries"][2]),
        ignored_errors=int(found["ignored_errors"][1]),
        reconnects=int(found["reconnects"][1]),
        total_time_s=float(found["total_time"][1]),
        latency_min_ms=float(found["lat_min"][1]),
        latency_avg_ms=float(found["lat_avg"][1]),
        latency_max_ms=float(found["lat_max"][1]),
        latency_p95_ms=float(found["lat_p95"][1]),
    )


def base_args(conn: Connection, tables: int, table_size: int) -> list[str]:
    return [
        "sysbench",
        "--db-driver=mysql",
        f"--mysql-socket={conn.socket}",
        f"--mysql-user={conn.user}",
        f"--mysql-db={conn.database}",
        f"--tables={tables}",
        f"--table-size={table_size}",
    ]


def run_args(
    conn: Connection,
    workload: str,
    *,
    tables: int,
    table_size: int,
    threads: int,
    time_s: int,
    rand_type: str,
) -> list[str]:
    return [
        *base_args(conn, tables, table_size),
        f"--threads={threads}",
        f"--time={time_s}",
        "--events=0",
        f"--rand-type={rand_type}",
        "--percentile=95",
        workload,
        "run",
    ]


def prepare(conn: Connection, *, tables: int, table_size: int, log: Path, timeout_s: float) -> None:
    """Create and fill the sbtest tables.  oltp_common's prepare is shared by every OLTP
    script, so the data set is the same whichever workload is measured later; a fixed seed
    makes it the same for both variants too."""
    threads = min(tables, 4)
    argv = [*base_args(conn, tables, table_size), f"--threads={threads}", "--rand-seed=1"]
    proc.run(
        [*argv, "oltp_read_only", "prepare"],
        phase="sysbench prepare",
        timeout_s=timeout_s,
        stdout_path=log,
        hint=INSTALL_HINT,
    )


def run(
    conn: Connection,
    workload: str,
    *,
    tables: int,
    table_size: int,
    threads: int,
    time_s: int,
    rand_type: str,
    log: Path,
) -> SysbenchResult:
    argv = run_args(
        conn,
        workload,
        tables=tables,
        table_size=table_size,
        threads=threads,
        time_s=time_s,
        rand_type=rand_type,
    )
    # Generous: sysbench stops itself at --time; the margin covers connecting 64 threads.
    result = proc.run(
        argv,
        phase=f"sysbench {workload}",
        timeout_s=time_s + 120,
        stdout_path=log,
        hint=INSTALL_HINT,
        check=False,
    )
    try:
        parsed = parse_report(result.stdout)
    except ToolError as exc:
        raise ToolError(
            str(exc),
            argv=argv,
            returncode=result.returncode,
            phase=f"sysbench {workload}",
            tail=proc.tail(log),
        ) from exc
    if result.returncode != 0:
        raise ToolError(
            "sysbench failed",
            argv=argv,
            returncode=result.returncode,
            phase=f"sysbench {workload}",
            tail=proc.tail(log),
        )
    return parsed
