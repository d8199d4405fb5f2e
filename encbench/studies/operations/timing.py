"""The measured window of an operation: its seconds (time.perf_counter) and the machine's
other load meanwhile (engine/clocks.py).  Unlike a sysbench window, processes are born inside
it (the server an operation starts, mariadb-backup): every descendant of encbench alive when
the window closes counts as this run's, from zero if it was born inside."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from encbench import proc
from encbench.engine.clocks import Clocks, Window


def _no_server_cpu() -> float:
    # The operation's own CPU is not compared; only the other load is wanted here.
    return 0.0


@dataclass
class Stopwatch:
    seconds: float = 0.0
    window: Window | None = None


def _close(start: Clocks) -> Window:
    alive = proc.descendants(os.getpid())
    born = {pid: 0.0 for pid in alive if pid not in start.run_cpu_s}
    opened = dataclasses.replace(start, run_cpu_s={**born, **start.run_cpu_s})
    end = Clocks.read(0, opened.pids, _no_server_cpu)
    return Window.between(opened, end)


@contextmanager
def timed() -> Iterator[Stopwatch]:
    """with timed() as watch: <operation>; then watch.seconds and watch.window."""
    watch = Stopwatch()
    start = Clocks.read(0, None, _no_server_cpu)
    began = time.perf_counter()
    yield watch
    watch.seconds = time.perf_counter() - began
    watch.window = _close(start)
