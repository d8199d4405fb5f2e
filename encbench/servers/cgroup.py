"""One cgroup per sandboxed server, so that its CPU is counted by the kernel in nanoseconds
rather than sampled from /proc/PID/stat in 10 ms ticks (about 1% of a 1 s run).

Which hierarchy: cgroup v2 where /sys/fs/cgroup itself is a cgroup2 mount (`cpu.stat`,
`usage_usec`: every v2 group has it, no controller needs enabling); otherwise the v1
hierarchy that carries the `cpuacct` controller (`cpuacct.usage`, nanoseconds), as on this
VM.  The group is made below encbench's own group (/proc/self/cgroup), named
`encbench-<pid>-<server>-<random>`, the server's pid is written to its `cgroup.procs` right
after the server starts (every thread of the process moves with it, and later threads are
born in it), and it is removed (rmdir) when the server has stopped.

Each group is recorded (one JSON file under $XDG_STATE_HOME/encbench/cgroups) before it is
made, with the run that made it, so `encbench clean` can remove the groups of a run that was
killed outright (clean_stale).  encbench never removes a group it has no record of, and the
kernel refuses to remove a group that still holds a process.

Without root, or without a usable hierarchy, no group is made: the server's CPU is then read
from /proc/PID/stat (ProcStatCounter) and every run records which source it used.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from encbench import proc, state

GROUP_PREFIX = "encbench-"
MOUNTS = Path("/proc/mounts")
SELF_CGROUP = Path("/proc/self/cgroup")
V2_ROOT = Path("/sys/fs/cgroup")
# An exiting server leaves its group a moment after its parent has reaped it.
RMDIR_WAIT_S = 5.0

# The sources of a server's CPU, as recorded in each run (`cpu_source`).
SOURCE_V2 = "cgroup2 cpu.stat"
SOURCE_V1 = "cgroup1 cpuacct.usage"
SOURCE_PROC = "/proc/PID/stat"


@dataclass(frozen=True)
class CpuCounter:
    """A file that holds one process's (or group's) CPU time, and how to read it.  The same
    rule is applied by the Lua window hook (workloads/lua/window.lua), which reads the file
    inside sysbench, and by `read_s` here."""

    source: str  # SOURCE_V2, SOURCE_V1 or SOURCE_PROC
    path: Path
    kind: str  # "usage_usec" (v2 cpu.stat), "ns" (v1 cpuacct.usage), "proc_stat_ticks"

    @property
    def unit_s(self) -> float:
        """Seconds per unit of the raw number."""
        if self.kind == "usage_usec":
            return 1e-6
        if self.kind == "ns":
            return 1e-9
        return 1.0 / os.sysconf("SC_CLK_TCK")

    def raw(self) -> int:
        return parse_counter(self.kind, self.path.read_text())

    def read_s(self) -> float:
        return self.raw() * self.unit_s


def parse_counter(kind: str, text: str) -> int:
    """The raw counter in a counter file's text (unit: CpuCounter.unit_s)."""
    if kind == "usage_usec":
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value)
        raise ValueError("no usage_usec line in cpu.stat")
    if kind == "ns":
        return int(text.split()[0])
    if kind == "proc_stat_ticks":
        # Fields after the command name (which may hold spaces) start at field 3; utime and
        # stime are fields 14 and 15.
        fields = text.rpartition(")")[2].split()
        if len(fields) < 13:
            raise ValueError(f"not a /proc/PID/stat line: {text[:80]!r}")
        return int(fields[11]) + int(fields[12])
    raise ValueError(f"unknown counter kind {kind!r}")


def proc_stat_counter(pid: int) -> CpuCounter:
    return CpuCounter(SOURCE_PROC, Path(f"/proc/{pid}/stat"), "proc_stat_ticks")


@dataclass(frozen=True)
class Hierarchy:
    """Where encbench can make groups: a cgroup mount and encbench's own group in it."""

    version: int  # 1 or 2
    mount: Path
    own: str  # encbench's own group, relative to the mount ("/" at the top)

    @property
    def parent(self) -> Path:
        return self.mount / self.own.lstrip("/")


def find_hierarchy(mounts: str, self_cgroup: str) -> Hierarchy | None:
    """The hierarchy to use, from the text of /proc/mounts and /proc/self/cgroup; None when
    neither a v2 /sys/fs/cgroup nor a v1 cpuacct hierarchy is mounted."""
    v1_mount: Path | None = None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mount_point, fstype, options = Path(parts[1]), parts[2], parts[3].split(",")
        if fstype == "cgroup2" and mount_point == V2_ROOT:
            own = own_group(self_cgroup, lambda controllers, hid: hid == "0")
            return Hierarchy(2, mount_point, own) if own is not None else None
        if fstype == "cgroup" and "cpuacct" in options and v1_mount is None:
            v1_mount = mount_point
    if v1_mount is None:
        return None
    own = own_group(self_cgroup, lambda controllers, hid: "cpuacct" in controllers)
    return Hierarchy(1, v1_mount, own) if own is not None else None


def own_group(self_cgroup: str, wanted: Callable[[list[str], str], bool]) -> str | None:
    for line in self_cgroup.splitlines():
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if wanted(controllers.split(","), hid):
            return path or "/"
    return None


def detect() -> Hierarchy | None:
    """This machine's hierarchy, if encbench may make groups in it (root, or a delegated
    group it can write)."""
    try:
        found = find_hierarchy(MOUNTS.read_text(), SELF_CGROUP.read_text())
    except OSError:
        return None
    if found is None or not os.access(found.parent, os.W_OK):
        return None
    return found


# -- the record of the groups encbench made -----------------------------------------------------
def records_dir() -> Path:
    return state.folder("cgroups")


@dataclass(frozen=True)
class Record:
    path: str
    run_id: str
    owner_pid: int
    owner_start_ticks: int | None

    @property
    def owner(self) -> proc.RunIdentity:
        return proc.RunIdentity(self.run_id, self.owner_pid, self.owner_start_ticks)

    @property
    def file(self) -> Path:
        return records_dir() / f"{Path(self.path).name}.json"


def _records() -> list[Record]:
    return state.read_records("cgroups", lambda data: Record(**data))


def _remove_dir(path: Path, wait_s: float) -> bool:
    """rmdir a group (the kernel refuses while a process is in it); True once it is gone."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


class CountingGroup(Protocol):
    """What a server keeps of its group while it runs: where its CPU is read, and how the
    group goes when the server has stopped (ServerCgroup, shapes.ShapedGroup)."""

    @property
    def counter(self) -> CpuCounter: ...

    def members(self) -> list[int]: ...

    def remove(self, wait_s: float = RMDIR_WAIT_S) -> bool: ...


class ServerCgroup:
    """The group of one server; create() it, add() the server's pid, remove() after stop."""

    def __init__(self, hierarchy: Hierarchy, server_name: str, name: str = "") -> None:
        self.hierarchy = hierarchy
        # A shaped server has one directory per v1 hierarchy (servers/shapes.py): each its
        # own name, since the records are filed by name.
        name = name or f"{GROUP_PREFIX}{os.getpid()}-{server_name}-{secrets.token_hex(3)}"
        self.path = hierarchy.parent / name
        owner = proc.current_run()
        self.record = Record(str(self.path), owner.run_id, owner.pid, owner.start_ticks)

    @property
    def counter(self) -> CpuCounter:
        if self.hierarchy.version == 2:
            return CpuCounter(SOURCE_V2, self.path / "cpu.stat", "usage_usec")
        return CpuCounter(SOURCE_V1, self.path / "cpuacct.usage", "ns")

    def create(self) -> None:
        # Recorded first: a run killed between the two steps leaves a record, never a group
        # nobody knows about.
        self.record.file.write_text(json.dumps(asdict(self.record)))
        try:
            self.path.mkdir()
        except OSError:
            self.record.file.unlink(missing_ok=True)
            raise

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def members(self) -> list[int]:
        """The pids still in the group: what the server started and did not take with it."""
        return _members(self.path)

    def remove(self, wait_s: float = RMDIR_WAIT_S) -> bool:
        """Remove the group once its server is gone; the record goes with it.  False when the
        kernel still refused after wait_s (the record stays for `encbench clean`)."""
        if not _remove_dir(self.path, wait_s):
            return False
        self.record.file.unlink(missing_ok=True)
        return True


def for_server(server_name: str, pid: int) -> ServerCgroup | None:
    """A new group holding the server `pid`, or None (no usable hierarchy, or the kernel
    refused): the caller then reads /proc/PID/stat."""
    hierarchy = detect()
    if hierarchy is None:
        return None
    group = ServerCgroup(hierarchy, server_name)
    try:
        group.create()
    except OSError:
        return None
    try:
        group.add(pid)
        group.counter.raw()
    except (OSError, ValueError):
        group.remove(wait_s=0)
        return None
    return group


def _members(path: Path) -> list[int]:
    try:
        return [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def clean_stale(include_live_runs: bool = False, only: proc.RunIdentity | None = None) -> list[str]:
    """Remove the recorded groups of runs that are gone (after their servers were stopped:
    call this after the sandboxes are cleaned).  One line per action."""
    actions = []
    for record in _records():
        if not proc.to_clean(record.owner, include_live_runs, only):
            continue
        path = Path(record.path)
        if not path.name.startswith(GROUP_PREFIX):
            record.file.unlink(missing_ok=True)
            continue
        if not path.exists():
            record.file.unlink(missing_ok=True)
            continue
        removed = _remove_dir(path, wait_s=1.0)
        if not removed:
            # Only what a run placed in its own group is in it (its server, or one killed
            # before the run recorded it, and their children): ended by pid.
            proc.kill_pids(_members(path))
            removed = _remove_dir(path, wait_s=RMDIR_WAIT_S)
        if removed:
            record.file.unlink(missing_ok=True)
            actions.append(f"removed cgroup {path}")
        else:
            with contextlib.suppress(OSError):
                held = (path / "cgroup.procs").read_text().split()
                actions.append(f"kept cgroup {path}: processes {', '.join(held)} still in it")
    return actions
