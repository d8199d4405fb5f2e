"""The data device's counters (machine/disk_window.py) and what a window of them says."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.machine.disk_window import DiskCounters, DiskWindow, device_of

# Two readings of /proc/diskstats one second apart (a real line's layout: major minor name,
# then reads, merged, sectors, ms reading, writes, merged, sectors, ms writing, in flight,
# ms busy, weighted ms, then discard and flush fields that are not read).
BEFORE = """\
 253       0 vda 1000 10 80000 500 2000 20 160000 1500 0 900 2000 0 0 0 0 10 5
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""
AFTER = """\
 253       0 vda 1300 10 82048 800 2100 20 162048 1700 2 1850 3400 0 0 0 0 10 5
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""


def _counters(tmp_path: Path, text: str) -> DiskCounters:
    stats = tmp_path / "diskstats"
    stats.write_text(text)
    found = DiskCounters.read("vda", stats)
    assert found is not None
    return found


def test_a_window_reads_as_iostat_does(tmp_path: Path) -> None:
    window = DiskWindow.between(_counters(tmp_path, BEFORE), _counters(tmp_path, AFTER), 1.0)
    assert window.busy_pct == 95.0  # 950 ms busy of 1000
    assert window.iops == 400.0  # 300 reads + 100 writes
    assert window.read_mib_s == 1.0 and window.write_mib_s == 1.0  # 2048 sectors each
    assert window.queue == 1.4  # 1400 weighted ms per second
    assert window.await_ms == 500 / 400  # 300 + 200 ms waited by 400 requests


def test_busy_never_reads_above_the_wall_clock(tmp_path: Path) -> None:
    window = DiskWindow.between(_counters(tmp_path, BEFORE), _counters(tmp_path, AFTER), 0.9)
    assert window.busy_pct == 100.0


def test_an_unknown_device_has_no_counters(tmp_path: Path) -> None:
    stats = tmp_path / "diskstats"
    stats.write_text(BEFORE)
    assert DiskCounters.read("sdz", stats) is None


def test_device_of_a_path_follows_sys_dev_block(tmp_path: Path) -> None:
    import os

    dev = os.stat(tmp_path).st_dev
    sys_block = tmp_path / "sys"
    sys_block.mkdir()
    (tmp_path / "block" / "vdz").mkdir(parents=True)
    (sys_block / f"{os.major(dev)}:{os.minor(dev)}").symlink_to(tmp_path / "block" / "vdz")
    assert device_of(tmp_path, sys_block) == "vdz"
    assert device_of(tmp_path / "missing", sys_block) is None


def test_a_window_says_what_the_run_used(tmp_path: Path) -> None:
    disk = DiskWindow.between(_counters(tmp_path, BEFORE), _counters(tmp_path, AFTER), 2.0)
    window = Window(
        wall_s=2.0,
        server_cpu_s=1.5,
        harness_cpu_s=0.1,
        client_cpu_s=0.8,
        other_cpu_s=0.0,
        steal_s=0.4,
        interference_pct=10.0,
        machine_busy_s=3.2,
        disk=disk,
    )
    usage = window.usage(server_cpu_s=1.5, server_window_s=1.5, device="vda")
    assert usage.cores_busy == 1.8  # (3.2 busy + 0.4 stolen) / 2 s
    assert usage.server_cores == 1.0
    assert usage.disk_device == "vda" and usage.disk_busy_pct == 47.5
    assert Window(1.0, 0, 0, 0, 0, 0, 0).usage().disk_busy_pct is None


def test_a_capped_servers_own_io_is_a_rate_over_its_window() -> None:
    from encbench.engine.clocks import Clocks

    def reading(wall_s: float, ios: tuple[int, int] | None) -> Clocks:
        return Clocks(wall_s, 0.0, 0.0, 0.0, 0.0, 0.0, server_ios=ios)

    window = Window.between(reading(10.0, (100, 7)), reading(12.5, (200, 27)))
    assert (window.server_reads, window.server_writes) == (100, 20)
    # Counted around the client's start-up, done within the server's 2 s loop.
    usage = window.usage(server_cpu_s=0.2, server_window_s=2.0, iops_cap=50.0)
    assert (usage.server_read_iops, usage.server_write_iops, usage.iops_cap) == (50.0, 10.0, 50.0)
    unread = Window.between(reading(10.0, None), reading(12.5, (200, 27))).usage()
    assert unread.server_read_iops is None and unread.iops_cap is None


def test_kernel_threads_work_counts_as_the_runs_not_as_other_load() -> None:
    """Under the filesystem layer fscrypt decrypts in kernel threads, outside the server's
    cgroup: read (kernel_threads=True), that CPU leaves the other load that would have the
    round measured again."""

    def reading(wall_s: float, busy_s: float, kernel_s: float | None) -> Clocks:
        return Clocks(wall_s, 0.0, 0.0, 0.0, busy_s, 0.0, kernel_cpu_s=kernel_s)

    window = Window.between(reading(0.0, 0.0, 5.0), reading(1.0, 1.5, 6.2), cores=2)
    assert window.kernel_cpu_s is not None and round(window.kernel_cpu_s, 6) == 1.2
    assert round(window.other_cpu_s, 6) == 0.3 and round(window.interference_pct, 6) == 15.0
    unread = Window.between(reading(0.0, 0.0, None), reading(1.0, 1.5, 6.2), cores=2)
    assert unread.kernel_cpu_s is None and unread.other_cpu_s == 1.5


def test_only_kernel_threads_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    class Task:
        def __init__(self, ppid: int, cpu: float) -> None:
            times = SimpleNamespace(user=cpu, system=cpu / 2)
            self.info = {"ppid": ppid, "cpu_times": times}

    tasks = [Task(proc.KTHREADD, 1.5), Task(proc.KTHREADD, 0.25), Task(1, 9.0), Task(2000, 4.0)]
    monkeypatch.setattr(psutil, "process_iter", lambda attrs: iter(tasks))
    assert proc.kernel_threads_cpu_s() == 1.5 * 1.75
