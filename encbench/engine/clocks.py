"""The clocks read around a measured window, and what their differences say.

Read just before and just after sysbench runs (never during it): wall time; the server's CPU
(/proc/PID/stat, or a finer counter such as the server's cgroup); encbench's own CPU; its
waited-for children's CPU, which over the window is sysbench's; the whole machine's busy and
stolen CPU (/proc/stat).  What the machine spent beyond those three is other processes' load:
on a shared machine that is the noise that paired rounds must absorb, and the report shows it
instead of hiding it.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass

from encbench import proc


@dataclass(frozen=True)
class Clocks:
    wall_s: float
    server_cpu_s: float
    harness_cpu_s: float
    children_cpu_s: float
    machine_busy_s: float
    machine_steal_s: float

    @classmethod
    def read(cls, server_pid: int, server_cpu_s: Callable[[], float] | None = None) -> Clocks:
        """server_cpu_s: where the server's CPU is read (default /proc/PID/stat, 10 ms ticks)."""
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
        )


@dataclass(frozen=True)
class Window:
    """Differences of two Clocks readings."""

    wall_s: float
    server_cpu_s: float
    harness_cpu_s: float
    client_cpu_s: float
    other_cpu_s: float
    steal_s: float

    @classmethod
    def between(cls, start: Clocks, end: Clocks) -> Window:
        server = end.server_cpu_s - start.server_cpu_s
        harness = end.harness_cpu_s - start.harness_cpu_s
        client = end.children_cpu_s - start.children_cpu_s
        busy = end.machine_busy_s - start.machine_busy_s
        return cls(
            wall_s=end.wall_s - start.wall_s,
            server_cpu_s=server,
            harness_cpu_s=harness,
            client_cpu_s=client,
            # Tick granularity (10 ms) can make the remainder slightly negative: that is 0.
            other_cpu_s=max(0.0, busy - server - harness - client),
            steal_s=end.machine_steal_s - start.machine_steal_s,
        )
