"""The clocks read around a measured window, and what their differences say.

Read just before and just after sysbench runs (never during it): wall time; the server's CPU
(/proc/PID/stat, or a finer counter such as the server's cgroup); encbench's own CPU; its
waited-for children's CPU, which over the window is sysbench's; the CPU of every other
process of this run (the idle peer server, tunnels, delay relays: encbench's descendants when
the window opened); the whole machine's busy and stolen CPU (/proc/stat).  What the machine
spent beyond this run's processes, plus what the hypervisor stole, is *interference*: on a
shared machine that is the noise that paired rounds must absorb, and a round whose runs had
more than the profile's threshold is measured again (engine/rounds.py).

An operation's window (`timed`: a restart, a backup, a state transfer) is read the same way,
but unlike a sysbench window processes are born inside it (the server an operation starts,
mariadb-backup): every descendant of encbench alive when the window closes counts as this
run's, from zero if it was born inside.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from encbench import proc
from encbench.machine.disk_window import DiskCounters, DiskWindow
from encbench.results.schema import Usage


@dataclass(frozen=True)
class Clocks:
    wall_s: float
    server_cpu_s: float
    harness_cpu_s: float
    children_cpu_s: float
    machine_busy_s: float
    machine_steal_s: float
    # CPU so far of each live descendant of encbench (servers, tunnels, relays), by pid: the
    # pids are found when the window opens and the same ones read when it closes.
    run_cpu_s: dict[int, float] = field(default_factory=dict)
    # The data device's counters (machine/disk_window.py), where the study names a device.
    disk: DiskCounters | None = None
    # The reads and writes the server's own cgroup submitted to its disk (an instance shape
    # with an IOPS cap: servers/shapes.IoCounter), where the study names such a counter.
    server_ios: tuple[int, int] | None = None
    # Every kernel thread's CPU so far (proc.kernel_threads_cpu_s), where the study asks:
    # its servers' I/O goes through kernel threads (fscrypt's decryption, a loop device).
    kernel_cpu_s: float | None = None

    @classmethod
    def read(
        cls,
        server_pid: int,
        run_pids: list[int] | None = None,
        server_cpu_s: Callable[[], float] | None = None,
        device: str | None = None,
        server_ios: Callable[[], tuple[int, int]] | None = None,
        kernel_threads: bool = False,
    ) -> Clocks:
        """One reading; the opening one finds this run's processes (run_pids=None), the
        closing one reads the same and those born since (a PostgreSQL backend forked for a
        client's connection): Window.between(start, Clocks.read(pid, start.pids)).
        server_cpu_s: where the server's CPU is read (default /proc/PID/stat, 10 ms ticks);
        device: the data device whose /proc/diskstats line is read too; server_ios: where
        the server's own reads and writes are counted; kernel_threads: read every kernel
        thread's CPU too, which the window then counts as the run's, not as other load."""
        pids = proc.descendants(os.getpid())
        if run_pids is not None:
            pids = sorted({*run_pids, *pids})
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy, steal = proc.machine_cpu_s()
        return cls(
            wall_s=time.monotonic(),
            server_cpu_s=server_cpu_s() if server_cpu_s else proc.cpu_seconds(server_pid),
            harness_cpu_s=own.ru_utime + own.ru_stime,
            children_cpu_s=children.ru_utime + children.ru_stime,
            machine_busy_s=busy,
            machine_steal_s=steal,
            run_cpu_s=proc.processes_cpu_s(pids),
            disk=DiskCounters.read(device) if device else None,
            server_ios=server_ios() if server_ios else None,
            kernel_cpu_s=proc.kernel_threads_cpu_s() if kernel_threads else None,
        )

    @property
    def pids(self) -> list[int]:
        return list(self.run_cpu_s)


@dataclass(frozen=True)
class Window:
    """Differences of two Clocks readings."""

    wall_s: float
    server_cpu_s: float
    harness_cpu_s: float
    client_cpu_s: float
    other_cpu_s: float  # processes outside this run
    steal_s: float
    interference_pct: float  # (other + steal) as a share of the machine over the window
    # Every process's CPU on the machine (interrupts left out, as in proc.busy_and_steal).
    machine_busy_s: float = 0.0
    disk: DiskWindow | None = None  # where both readings had the device's counters
    # The server's own reads and writes over the window, where both readings counted them.
    server_reads: int | None = None
    server_writes: int | None = None
    # Kernel threads' CPU over the window, where both readings had it (Clocks.kernel_cpu_s):
    # the I/O stack's work for this run's server, left out of other_cpu_s.
    kernel_cpu_s: float | None = None

    @classmethod
    def between(cls, start: Clocks, end: Clocks, cores: int | None = None) -> Window:
        wall = end.wall_s - start.wall_s
        server = end.server_cpu_s - start.server_cpu_s
        harness = end.harness_cpu_s - start.harness_cpu_s
        client = end.children_cpu_s - start.children_cpu_s
        busy = end.machine_busy_s - start.machine_busy_s
        # This run's other processes, over the pids alive at its end (the server is one of
        # them): one born in between counts from nothing, one that ended in between was
        # reaped by its parent, in the tree.  A pid that reads less than it did at the start
        # is a new process on a recycled pid: all of its CPU is the window's.
        run = sum(
            now - before if now >= before else now
            for pid, now in end.run_cpu_s.items()
            for before in [start.run_cpu_s.get(pid, 0.0)]
        )
        if not start.run_cpu_s:
            run = server  # no process tree read (a target that is not our child)
        kernel = (
            max(0.0, end.kernel_cpu_s - start.kernel_cpu_s)
            if start.kernel_cpu_s is not None and end.kernel_cpu_s is not None
            else None
        )
        # Tick granularity (10 ms) can make the remainder slightly negative: that is 0.
        other = max(0.0, busy - run - harness - client - (kernel or 0.0))
        steal = max(0.0, end.machine_steal_s - start.machine_steal_s)
        machine = wall * (cores or os.cpu_count() or 1)
        ios = (
            (end.server_ios[0] - start.server_ios[0], end.server_ios[1] - start.server_ios[1])
            if start.server_ios is not None and end.server_ios is not None
            else (None, None)
        )
        return cls(
            wall_s=wall,
            server_cpu_s=server,
            harness_cpu_s=harness,
            client_cpu_s=client,
            other_cpu_s=other,
            steal_s=steal,
            interference_pct=100.0 * (other + steal) / machine if machine > 0 else 0.0,
            machine_busy_s=busy,
            disk=(
                DiskWindow.between(start.disk, end.disk, wall)
                if start.disk is not None and end.disk is not None
                else None
            ),
            server_reads=ios[0],
            server_writes=ios[1],
            kernel_cpu_s=kernel,
        )

    def usage(
        self,
        server_cpu_s: float | None = None,
        server_window_s: float | None = None,
        device: str = "",
        server_cores_allowed: float | None = None,
        iops_cap: float | None = None,
    ) -> Usage:
        """What the run used of the machine over this window (results/schema.py: Usage);
        the server's CPU over its own window where that differs (at rest: the event loop),
        and its own reads and writes per second over that window too: the counters are read
        with the clocks, around the client's start and end, and the server does its I/O
        while the client's loop runs (a short run's start-up would dilute them)."""
        disk = self.disk
        wall = self.wall_s if self.wall_s > 0 else 1.0
        span = server_window_s or wall

        def per_s(count: int | None) -> float | None:
            return count / span if count is not None else None

        return Usage(
            cores=float(os.cpu_count() or 1),
            cores_busy=(self.machine_busy_s + self.steal_s) / wall,
            server_cores=server_cpu_s / span if server_cpu_s is not None else None,
            server_cores_allowed=server_cores_allowed,
            disk_device=device if disk is not None else "",
            disk_busy_pct=disk.busy_pct if disk else None,
            disk_iops=disk.iops if disk else None,
            disk_read_mib_s=disk.read_mib_s if disk else None,
            disk_write_mib_s=disk.write_mib_s if disk else None,
            disk_queue=disk.queue if disk else None,
            disk_await_ms=disk.await_ms if disk else None,
            server_read_iops=per_s(self.server_reads),
            server_write_iops=per_s(self.server_writes),
            iops_cap=iops_cap,
        )


def _no_server_cpu() -> float:
    # The operation's own CPU is not compared; only the other load is wanted here.
    return 0.0


@dataclass
class Stopwatch:
    """What `timed` measured: the operation's seconds (time.perf_counter) and the machine's
    other load meanwhile."""

    seconds: float = 0.0
    window: Window | None = None


def _close(start: Clocks, device: str | None) -> Window:
    alive = proc.descendants(os.getpid())
    born = {pid: 0.0 for pid in alive if pid not in start.run_cpu_s}
    opened = dataclasses.replace(start, run_cpu_s={**born, **start.run_cpu_s})
    end = Clocks.read(0, opened.pids, _no_server_cpu, device)
    return Window.between(opened, end)


@contextmanager
def timed(device: str | None = None) -> Iterator[Stopwatch]:
    """with timed() as watch: <operation>; then watch.seconds and watch.window (with the
    data device's counters where `device` is named)."""
    watch = Stopwatch()
    start = Clocks.read(0, None, _no_server_cpu, device)
    began = time.perf_counter()
    yield watch
    watch.seconds = time.perf_counter() - began
    watch.window = _close(start, device)
