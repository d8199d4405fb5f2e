"""sysbench 1.0.20, the one wrapper every study drives it through: over the unix socket or
TCP, with or without TLS, the stock OLTP scripts or encbench's own Lua scripts (lua/); the
command line, the run, and the report it prints at the end.

We parse sysbench's standard final report rather than installing a Lua report hook so that
the scripts run are exactly the stock ones users quote (/usr/share/sysbench/oltp_*.lua).  The
parser is tested on golden outputs of the real sysbench 1.0.20 (tests/golden/sysbench/).

With a `cpu_counter`, the stock script runs inside lua/window.lua, which leaves it unchanged
but reads the server's CPU counter where the event loop starts and ends (after every thread
has connected and prepared its statements, before any disconnects): `LoopWindow`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import BadInput, ToolError
from encbench.profiles.options import DataSpec
from encbench.servers import server_kind
from encbench.servers.cgroup import CpuCounter
from encbench.servers.target import Connection, Target

OLTP_WORKLOADS = (
    "oltp_read_only",
    "oltp_point_select",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
)
WRITE_WORKLOADS = frozenset(
    {
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
    }
)
INSTALL_HINT = "install it: apt-get install sysbench (or run `make setup`)"
WINDOW_LUA = Path(__file__).parent / "lua" / "window.lua"


def connection_args(conn: Connection, tls: bool = False) -> list[str]:
    """sysbench's options for where and as whom to connect, as the connection's kind writes
    them (its driver; its password never on the command line: servers/<kind>/sysbench.py)."""
    kind = server_kind.named(conn.kind)
    if kind.sysbench_connection is None:
        raise RuntimeError(f"sysbench is not a load client of {kind.title}")
    return kind.sysbench_connection(conn, tls)


@dataclass(frozen=True)
class LoopWindow:
    """The span of sysbench's event loop as lua/window.lua saw it: the earliest start of any
    thread's loop and the latest end, each with CLOCK_MONOTONIC (the clock of Python's
    time.monotonic_ns) and the server's raw CPU counter read at that moment."""

    start_ns: int
    end_ns: int
    start_counter: int
    end_counter: int
    threads: int  # how many threads reported both marks

    @property
    def wall_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


_WINDOW_LINE = re.compile(r"^encbench-window (start|end) (\d+) (\d+) (\d+)$", re.M)


def parse_window(text: str, threads: int) -> LoopWindow:
    """The window of a run under lua/window.lua; ToolError unless every thread marked both
    the start and the end of its loop."""
    marks: dict[str, dict[int, tuple[int, int]]] = {"start": {}, "end": {}}
    for phase, tid, at_ns, counter in _WINDOW_LINE.findall(text):
        marks[phase][int(tid)] = (int(at_ns), int(counter))
    starts, ends = marks["start"], marks["end"]
    if len(starts) != threads or len(ends) != threads:
        raise ToolError(
            f"sysbench's window hook marked {len(starts)} loop starts and {len(ends)} ends "
            f"for {threads} threads",
            phase="parse sysbench",
        )
    return LoopWindow(
        start_ns=min(at for at, _ in starts.values()),
        end_ns=max(at for at, _ in ends.values()),
        start_counter=min(c for _, c in starts.values()),
        end_counter=max(c for _, c in ends.values()),
        threads=threads,
    )


@dataclass(frozen=True)
class Second:
    """One per-second report (`--report-interval=1`): the second it closes (counted from the
    start of the run), its TPS and its 95th percentile latency."""

    at: int
    tps: float
    p95_ms: float


_INTERVAL = re.compile(
    r"^\[ (?P<at>\d+)s \] thds: \d+ tps: (?P<tps>[\d.]+) .*?lat \(ms,95%\): (?P<p95>[\d.]+)",
    re.M,
)


def seconds(text: str) -> list[Second]:
    """The per-second reports in sysbench's output (other lines ignored)."""
    return [
        Second(int(m["at"]), float(m["tps"]), float(m["p95"])) for m in _INTERVAL.finditer(text)
    ]


# One row of the latency histogram (`--histogram=on`): a bucket's upper value in ms, its bar
# and its count of events.
_HISTOGRAM_ROW = re.compile(r"^\s+([\d.]+) \|[* ]*?\s(\d+)$", re.M)
_HISTOGRAM_HEAD = "Latency histogram (values are in milliseconds)"


def histogram_percentile(text: str, pct: float) -> float | None:
    """The pct-th percentile latency (ms) from sysbench's histogram, as sysbench computes
    its own --percentile (the smallest bucket value whose cumulative count reaches pct% of
    the events); None when the output has no histogram."""
    at = text.find(_HISTOGRAM_HEAD)
    if at < 0:
        return None
    rows = [(float(v), int(c)) for v, c in _HISTOGRAM_ROW.findall(text[at:].split("\n \n")[0])]
    total = sum(c for _, c in rows)
    if total <= 0:
        return None
    needed, seen = total * pct / 100.0, 0
    for value, count in rows:
        seen += count
        if seen >= needed:
            return value
    return rows[-1][0]


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
    window: LoopWindow | None = None  # with a cpu_counter only
    # With `series` (invocation): the per-second reports and the 99th percentile from the
    # latency histogram; empty and None without.
    per_second: tuple[Second, ...] = ()
    latency_p99_ms: float | None = None

    def record_fields(self) -> dict[str, Any]:
        """What every study's record of a sysbench run keeps of its report: throughput, the
        transactions and errors it counts, and the average and p95 latency."""
        return {
            "tps": self.tps,
            "qps": self.qps,
            "transactions": self.transactions,
            "ignored_errors": self.ignored_errors,
            "latency_avg_ms": self.latency_avg_ms,
            "latency_p95_ms": self.latency_p95_ms,
        }


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


def oltp_options(tables: int, table_size: int, rand_type: str = "uniform") -> list[str]:
    """The options of the stock OLTP scripts (oltp_common.lua)."""
    return [f"--tables={tables}", f"--table-size={table_size}", f"--rand-type={rand_type}"]


def command(
    conn: Connection,
    script: str,
    *,
    threads: int,
    time_s: int,
    events: int = 0,
    tls: bool = False,
    options: Sequence[str] = (),
    action: str = "run",
    series: bool = False,
) -> list[str]:
    """One sysbench command line.  With tls, over TCP, the connection's kind asks for TLS
    (MariaDB's: sysbench reads the client's PEM files from its working directory).  With
    series, a report every second and the latency histogram at the end
    (SysbenchResult.per_second, latency_p99_ms)."""
    if threads <= 0 or time_s < 0 or events < 0:
        raise BadInput(
            f"threads must be > 0 and time/events ≥ 0 (got {threads}, {time_s}, {events})"
        )
    argv = ["sysbench", *connection_args(conn, tls)]
    argv.append(f"--threads={threads}")
    if action == "run":
        argv += [f"--time={time_s}", f"--events={events}", "--percentile=95"]
        if series:
            argv += ["--report-interval=1", "--histogram=on"]
    return [*argv, *options, script, action]


def execute(
    argv: list[str],
    *,
    phase: str,
    log: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    workdir: Path | None = None,
    prefix: Sequence[str] = (),
) -> str:
    """Run sysbench (on another emulated host with a `prefix`: netns.exec_prefix); its
    output goes to `log`.  A failure raises ToolError with the tail of that output."""
    result = proc.run(
        [*prefix, *argv],
        phase=phase,
        timeout_s=timeout_s,
        cwd=workdir,
        stdout_path=log,
        env=env,
        hint=INSTALL_HINT,
        check=False,
    )
    if result.returncode != 0:
        raise ToolError(
            "sysbench failed",
            argv=argv,
            returncode=result.returncode,
            phase=phase,
            tail=proc.tail(log),
        )
    return result.stdout


# The slowest load of sysbench's tables still taken as going (its timeout): a load that
# crawls below it is stuck, not slow.
PREPARE_ROWS_PER_S = 2000


def prepare(
    conn: Connection,
    *,
    tables: int,
    table_size: int,
    log: Path,
    timeout_s: float | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Create and fill the sbtest tables.  oltp_common's prepare is shared by every OLTP
    script, so the data set is the same whichever workload is measured later; a fixed seed
    makes it the same for both variants too.  Without `timeout_s`, a load slower than
    PREPARE_ROWS_PER_S (and longer than 10 minutes) is taken as stuck."""
    if timeout_s is None:
        timeout_s = max(600, tables * table_size / PREPARE_ROWS_PER_S)
    argv = command(
        conn,
        "oltp_read_only",
        threads=min(tables, 4),
        time_s=0,
        options=[f"--tables={tables}", f"--table-size={table_size}", "--rand-seed=1"],
        action="prepare",
    )
    execute(argv, phase="sysbench prepare", log=log, timeout_s=timeout_s, env=env)


def load(server: Target, data: DataSpec, log: Path) -> None:
    """The sbtest tables of `data` (`prepare`) in the server's own database, made first if
    missing."""
    server.query(f"CREATE DATABASE IF NOT EXISTS {server.database}")
    prepare(server.endpoint(), tables=data.tables, table_size=data.table_size, log=log)


@dataclass(frozen=True)
class Invocation:
    """One measured run, ready to start: its command line, environment and how to read it."""

    argv: list[str]
    env: Mapping[str, str] | None
    phase: str
    log: Path
    threads: int
    windowed: bool  # runs inside lua/window.lua: the result carries the loop's window
    timeout_s: float
    workdir: Path | None = None
    series: bool = False  # per-second reports and the histogram: the result carries them

    def result(self, returncode: int, out: str) -> SysbenchResult:
        """The run's report parsed; a failed run raises ToolError with its output's tail."""
        if returncode != 0:
            raise ToolError(
                "sysbench failed",
                argv=self.argv,
                returncode=returncode,
                phase=self.phase,
                tail=proc.tail(self.log),
            )
        try:
            result = parse_report(out)
            if self.windowed:
                result = dataclasses.replace(result, window=parse_window(out, self.threads))
            if self.series:
                result = dataclasses.replace(
                    result,
                    per_second=tuple(seconds(out)),
                    latency_p99_ms=histogram_percentile(out, 99.0),
                )
            return result
        except ToolError as exc:
            raise ToolError(
                str(exc), argv=self.argv, phase=self.phase, tail=proc.tail(self.log)
            ) from exc


def invocation(
    conn: Connection,
    script: str,
    *,
    threads: int,
    time_s: int,
    log: Path,
    options: Sequence[str] = (),
    tls: bool = False,
    env: Mapping[str, str] | None = None,
    workdir: Path | None = None,
    prefix: Sequence[str] = (),
    cpu_counter: CpuCounter | None = None,
    events: int = 0,
    series: bool = False,
) -> Invocation:
    """A measured run's command line.  With a cpu_counter (the server's cgroup or
    /proc/PID/stat), the script runs inside lua/window.lua and the result carries the event
    loop's window.  `prefix` goes before sysbench: another emulated host's netns.exec_prefix,
    or taskset (machine/placement.py)."""
    phase = f"sysbench {Path(script).stem}"
    if cpu_counter is not None:
        env = {
            **(env or {}),
            "ENCBENCH_SCRIPT": script,
            "ENCBENCH_CPU_COUNTER": str(cpu_counter.path),
            "ENCBENCH_CPU_KIND": cpu_counter.kind,
        }
        script = str(WINDOW_LUA)
    argv = command(
        conn,
        script,
        threads=threads,
        time_s=time_s,
        events=events,
        tls=tls,
        options=options,
        series=series,
    )
    return Invocation(
        argv=[*prefix, *argv],
        env=env,
        phase=phase,
        log=log,
        threads=threads,
        windowed=cpu_counter is not None,
        # Generous: sysbench stops itself at --time; the margin covers connecting 64 threads.
        timeout_s=time_s + 120,
        workdir=workdir,
        series=series,
    )


def run(started: Invocation) -> SysbenchResult:
    """One measured run (made by `invocation`); its final report parsed."""
    result = proc.run(
        started.argv,
        phase=started.phase,
        timeout_s=started.timeout_s,
        cwd=started.workdir,
        stdout_path=started.log,
        env=started.env,
        hint=INSTALL_HINT,
        check=False,
    )
    return started.result(result.returncode, result.stdout)


def run_together(invocations: Sequence[Invocation]) -> list[SysbenchResult]:
    """Several runs started at the same moment (a duet round: machine/placement.py); each result
    parsed once all have ended."""
    done = proc.run_together(
        [
            proc.Command(i.argv, i.phase, i.timeout_s, i.log, env=i.env, cwd=i.workdir)
            for i in invocations
        ],
        hint=INSTALL_HINT,
    )
    return [i.result(d.returncode, d.stdout) for i, d in zip(invocations, done, strict=True)]
