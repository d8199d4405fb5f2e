"""Where the runs of the `pinned` and `duet` ways of sharing the machine go (machine/placement.py):
equal halves, the duet's halves following the position in the round, pinning every thread
of a real process, and the one-line refusals."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from encbench.machine import placement


def test_halves_are_equal_and_disjoint_and_an_odd_cpu_is_left_out() -> None:
    assert placement.halves([0, 1]) == ((0,), (1,))
    assert placement.halves([0, 1, 2, 3]) == ((0, 1), (2, 3))
    assert placement.halves([0, 1, 2]) == ((0,), (1,))
    with pytest.raises(ValueError, match="at least 2 CPUs"):
        placement.halves([0])


def test_sequential_pins_nothing() -> None:
    where = placement.placement("sequential", 1, [0, 1])
    assert where == placement.UNPINNED
    assert where.client_prefix == []
    assert where.describe() == ("", "")


def test_pinned_puts_servers_and_client_on_separate_halves_whatever_the_position() -> None:
    for position in (0, 1):
        where = placement.placement("pinned", position, [0, 1, 2, 3])
        assert where.server == (0, 1)
        assert where.client == (2, 3)
        assert where.client_prefix == ["taskset", "-c", "2,3"]


def test_a_duet_side_keeps_server_and_client_on_the_half_its_position_names() -> None:
    first = placement.placement("duet", 0, [0, 1])
    second = placement.placement("duet", 1, [0, 1])
    assert (first.server, first.client) == ((0,), (0,))
    assert (second.server, second.client) == ((1,), (1,))
    assert second.describe() == ("1", "1")


def test_the_refusals_name_the_setting_and_the_fix() -> None:
    assert placement.problem("sequential", [0], None) is None
    one = placement.problem("duet", [0], "/usr/bin/taskset")
    assert one is not None and "at least 2 CPUs" in one and 'sharing = "sequential"' in one
    missing = placement.problem("pinned", [0, 1], None)
    assert missing is not None and "taskset" in missing and "util-linux" in missing
    assert placement.problem("pinned", [0, 1], "/usr/bin/taskset") is None


def _thread_masks(pid: int) -> set[frozenset[int]]:
    return {
        frozenset(os.sched_getaffinity(int(task.name)))
        for task in Path(f"/proc/{pid}/task").iterdir()
    }


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_pin_moves_every_thread_of_a_process_and_a_later_thread_inherits_it() -> None:
    # A child with a few threads, like a server's; one more once it reads a line.
    code = (
        "import sys, threading, time\n"
        "def sleeper():\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "for _ in range(3):\n"
        "    sleeper()\n"
        "sys.stdin.readline()\n"
        "sleeper()\n"
        "time.sleep(30)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, text=True)

    def tasks_reach(n: int) -> None:
        deadline = time.monotonic() + 10
        while len(list(Path(f"/proc/{child.pid}/task").iterdir())) < n:
            assert time.monotonic() < deadline, f"the child did not reach {n} threads"
            time.sleep(0.02)

    try:
        tasks_reach(4)
        first = placement.usable_cpus()[0]
        placement.pin(child.pid, [first])
        assert _thread_masks(child.pid) == {frozenset({first})}
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        tasks_reach(5)
        assert _thread_masks(child.pid) == {frozenset({first})}
    finally:
        child.kill()
        child.wait()
