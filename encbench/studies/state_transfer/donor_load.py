"""The donor's own service while it serves a state transfer: a light sysbench load on the
donor (the profile's donor_load_*), its throughput and p95 latency over a window just
before the joiner starts against the transfer itself, from one sysbench process that runs
through both.

sysbench's final report covers its whole run, so each window is read from its per-second
reports (`--report-interval=1`, flushed as they come): a window's TPS is the mean of the
whole seconds inside it, its p95 the median of their per-second 95th percentiles (one slow
second moves a median less than a maximum, whose value would grow with the window's length
alone).  The seconds are placed on the harness's clock by the moment each report line first
appears, polled every POLL_S: a report is written at the end of its second, so a second is
counted in a window only when it lies wholly inside it.

sysbench connects over the donor's unix socket, which reaches the server inside its network
namespace without a route; the tables are the sbtest tables the cluster loaded, on the donor
only (the joiner's copy is the transfer's)."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from encbench import proc
from encbench.errors import ToolError
from encbench.servers.target import Connection
from encbench.workloads import sysbench

POLL_S = 0.02
# The first second: sysbench's threads have connected, but the server's caches are cold.
RAMP_S = 1
# The last report after the transfer ends is at most a second away; more means it stalled.
LAST_REPORT_WAIT_S = 5.0
# A load far longer than any transfer: stopped when the window ends.
LOAD_TIME_S = 86_400

# The per-second reports, parsed where every sysbench output is (workloads/sysbench.py).
Second = sysbench.Second
seconds = sysbench.seconds


@dataclass(frozen=True)
class Figures:
    """A window's TPS and p95 (None: no whole second inside it)."""

    tps: float | None
    p95_ms: float | None


def window(reports: list[Second], start_s: float, end_s: float) -> Figures:
    """The reports of the whole seconds inside [start_s, end_s] (sysbench's clock): the
    second closing at `at` spans [at - 1, at]."""
    inside = [r for r in reports if r.at - 1 >= start_s and r.at <= end_s]
    if not inside:
        return Figures(None, None)
    return Figures(
        tps=statistics.fmean(r.tps for r in inside),
        p95_ms=statistics.median(r.p95_ms for r in inside),
    )


@dataclass
class Load:
    """A running load, anchored on the harness's clock: sysbench's second 0 is `zero`."""

    process: subprocess.Popen[str]
    log: Path
    argv: list[str]
    before_s: int
    zero: float = 0.0
    transfer: tuple[float, float] | None = None
    seen: list[Second] = field(default_factory=list)

    def _poll(self) -> None:
        self.seen = seconds(self.log.read_text(errors="replace"))

    def wait_for(self, at: int, timeout_s: float) -> None:
        """Until sysbench has reported second `at` (its first report anchors `zero`)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._poll()
            if self.seen and not self.zero:
                self.zero = time.monotonic() - self.seen[-1].at
            if self.seen and self.seen[-1].at >= at:
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise ToolError(
                    f"the load on the donor did not report second {at}"
                    + (" (it ended)" if self.process.poll() is not None else ""),
                    argv=self.argv,
                    returncode=self.process.returncode,
                    phase="state transfer: the load on the donor",
                    tail=proc.tail(self.log),
                )
            time.sleep(POLL_S)

    @contextmanager
    def transferring(self) -> Iterator[None]:
        """The transfer's window on the harness's clock (around the body)."""
        start = time.monotonic()
        yield
        self.transfer = (start - self.zero, time.monotonic() - self.zero)

    def fields(self) -> dict[str, float | None]:
        """The record's donor_* fields, once sysbench has reported the second the transfer
        ended in: before is the whole seconds after the ramp up to the transfer's start,
        during the whole seconds inside the transfer."""
        assert self.transfer is not None, "the transfer's window is set by transferring()"
        start, end = self.transfer
        self.wait_for(int(end), LAST_REPORT_WAIT_S)
        before = window(self.seen, RAMP_S, start)
        during = window(self.seen, start, end)
        return {
            "donor_tps_before": before.tps,
            "donor_p95_before_ms": before.p95_ms,
            "donor_tps_during": during.tps,
            "donor_p95_during_ms": during.p95_ms,
        }


def argv(
    conn: Connection, workload: str, *, threads: int, rate: int, tables: int, table_size: int
) -> list[str]:
    """The load's sysbench command line: per-second reports, rate-limited where `rate`."""
    return sysbench.command(
        conn,
        workload,
        threads=threads,
        time_s=LOAD_TIME_S,
        options=[
            *sysbench.oltp_options(tables, table_size),
            "--report-interval=1",
            *([f"--rate={rate}"] if rate else []),
        ],
    )


@contextmanager
def running(command: list[str], *, before_s: int, log: Path) -> Iterator[Load]:
    """The load started and its window before the transfer measured (RAMP_S, then
    before_s whole seconds): the body runs the transfer inside Load.transferring.  Stopped
    (its process group) on every exit."""
    with proc.background(command, phase="sysbench load on the donor", log=log) as process:
        load = Load(process, log, command, before_s)
        # Connecting takes well under a second; sysbench's own timeouts are longer.
        load.wait_for(RAMP_S + before_s, timeout_s=RAMP_S + before_s + 60)
        yield load
