"""Where a run's processes may run: the CPU placement behind the profile's `measure.sharing`.

A shared machine's noise reaches the two runs of a round differently when they run one after
the other: a burst of other load, or a core the hypervisor took away, hits one run and not
its partner.  Two ways to make both sides of a pair meet the same noise:

- `pinned`: the rounds stay sequential, but every server runs on one half of the CPUs and the
  client (sysbench) on the other, so server and client stop competing for a core and the
  scheduler stops moving them about;
- `duet` (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud",
  ICPE 2020): both variants run at the same time, each server with its own client on its own
  half of the CPUs, so that a burst hits both sides of the pair at once.  Which side gets which
  half alternates within each block of two rounds, as the order does in sequential rounds, so
  that a difference between the halves cancels out.

Both at once with nothing pinned is not offered: in an A/A of steady writes (two plain
servers, 16 threads each, 2 CPUs) one side starved the other, 38% behind it on average with
stalls of 2–4 s, where the pinned duet's halves traded places evenly.
`sequential` (the default) pins nothing.  Pinning is what taskset(1) does —
sched_setaffinity(2) on every thread of a process — so it needs no root and no cgroup; a
thread the server starts later inherits the mask of the thread that started it.

A half of a 2-CPU machine is one CPU: in `duet` each side's server and client share that CPU,
so a thread count above the half's CPUs measures queueing on it (the report says so).  With an
odd number of CPUs the last one is left to encbench itself, so the halves stay equal.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Sharing = Literal["sequential", "pinned", "duet"]
SHARINGS: tuple[Sharing, ...] = ("sequential", "pinned", "duet")
TASKSET = "taskset"


def usable_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (a container or a cpuset may allow fewer than
    os.cpu_count())."""
    return tuple(sorted(os.sched_getaffinity(0)))


def halves(cpus: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two equal, disjoint halves; an odd CPU out stays with neither."""
    half = len(cpus) // 2
    if half == 0:
        raise ValueError(f"two halves need at least 2 CPUs, not {len(cpus)}")
    return tuple(cpus[:half]), tuple(cpus[half : 2 * half])


def cpu_list(cpus: Sequence[int]) -> str:
    """As taskset and the records write a CPU set: "0", "0,1"."""
    return ",".join(str(c) for c in cpus)


@dataclass(frozen=True)
class Placement:
    """The CPUs of one run's server and of its client; None leaves that process unpinned."""

    server: tuple[int, ...] | None = None
    client: tuple[int, ...] | None = None

    @property
    def client_prefix(self) -> list[str]:
        """What goes before the client's command line."""
        return [TASKSET, "-c", cpu_list(self.client)] if self.client is not None else []

    def describe(self) -> tuple[str, str]:
        """(server, client) as the records keep them: "" for unpinned."""
        return (
            cpu_list(self.server) if self.server is not None else "",
            cpu_list(self.client) if self.client is not None else "",
        )


UNPINNED = Placement()


def placement(sharing: Sharing, position: int, cpus: Sequence[int]) -> Placement:
    """Where the run at `position` of its round (0 or 1) runs.  In a duet the position is
    the half of the CPUs its side gets, so the order of each block's rounds (drawn by the
    runner, opposite in its two rounds) alternates the halves between the variants."""
    if sharing == "sequential":
        return UNPINNED
    first, second = halves(cpus)
    if sharing == "pinned":
        return Placement(server=first, client=second)
    side = first if position == 0 else second
    return Placement(server=side, client=side)


def pin(pid: int, cpus: Sequence[int]) -> None:
    """Every thread of `pid` to `cpus`.  A thread that ends meanwhile is no error."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), set(cpus))


def problem(sharing: Sharing, cpus: Sequence[int], taskset: str | None) -> str | None:
    """Why `sharing` cannot be used here, or None."""
    if sharing == "sequential":
        return None
    if len(cpus) < 2:
        return (
            f"measure.sharing = {sharing!r} needs at least 2 CPUs and this process may use "
            f'{len(cpus)}; use sharing = "sequential"'
        )
    if taskset is None:
        return (
            f"measure.sharing = {sharing!r} pins sysbench with taskset, which is missing; "
            'install util-linux, or use sharing = "sequential"'
        )
    return None
