"""Instance shapes: a sandboxed server confined to a CPU and memory budget by cgroups, so that
"a smaller instance pays more for encryption" (seed 003: +0.06–4.22% CPU on a 4-core RDS
instance, +0.12–2.86% on an 8-core one) is measured as a dimension of the at-rest study.

A shape (profile `[[server.shapes]]`) is a number of CPUs (a cpuset: the first N CPUs this
process may use), optionally a CPU quota (CPUs' worth of time per 100 ms period, CFS
bandwidth control), a memory limit and an IOPS cap (reads and writes per second, each, on
the disk that holds the server's data directory: published instances differ in it as much
as in cores).  Where the kernel enforces them:

- cgroup v2, where /sys/fs/cgroup is a cgroup2 mount: one group below encbench's own, with
  `cpuset.cpus`, `cpu.max`, `memory.max` and `io.max`; the controllers are enabled in the
  parent's `cgroup.subtree_control` where they are not yet.  `cpu.stat` counts the server's
  CPU, `io.stat` its reads and writes.
- cgroup v1 otherwise (this VM): one directory per hierarchy, each below the group encbench
  runs in there (/proc/self/cgroup) — `cpuacct` (the CPU counter, as for every server),
  `cpuset` (`cpuset.cpus` and `cpuset.mems`, both written before a task may join), `cpu`
  (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), `memory` (`memory.limit_in_bytes`) and
  `blkio` (`blkio.throttle.read_iops_device` / `write_iops_device`; its
  `blkio.throttle.io_serviced` counts the server's reads and writes).

The IOPS cap names the whole disk (MAJ:MIN): the kernel refuses a partition's numbers (ENODEV)
and throttles a partition's I/O under its disk's rule, and counts it there (tried on a
partitioned loop device).  The cap and the counters count the same thing, the requests the
server submits (bios), before the device merges them.  On v1 only I/O the server submits
itself is throttled (InnoDB's O_DIRECT pages); writeback the kernel does for it is not
charged to the group.

The server joins every directory *before* it executes (enter_cgroups.py): on v1, memory that
a process allocated before it moved stays charged to its old group, and a server (MariaDB's)
allocates its buffer pool at once.  Each directory is recorded first (servers/cgroup.Record) and
removed when the server stops; `encbench clean` removes those of a run that was killed.

After each start the limits are read back from the cgroup files and the server is shown to be
confined: its `Cpus_allowed_list` (/proc/PID/status) is the shape's CPUs and /proc/PID/cgroup
names every group.  A shape that cannot be applied (no root, a controller missing) is refused
before anything starts (`problem`), never measured unconfined.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import EncbenchError, ProofError
from encbench.machine import disk_window
from encbench.machine.placement import cpu_list
from encbench.servers import cgroup
from encbench.servers.cgroup import CpuCounter, Hierarchy, ServerCgroup

ENTER_SCRIPT = Path(__file__).with_name("enter_cgroups.py")
# The kernel's default CFS period; a quota is written as CPUs × this.
CFS_PERIOD_US = 100_000
# cpu.cfs_quota_us takes 1 ms at least.
MIN_CPU_QUOTA = 0.01
V1_COUNTER = "cpuacct"
UNIFIED = "unified"
V1_IOPS_FILES = ("blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device")
MEMINFO = Path("/proc/meminfo")
SYS_CLASS_BLOCK = Path("/sys/class/block")
IO = "io"  # the IOPS cap's controller, as cgroup2 names it; v1's is blkio
# v1 hierarchies named otherwise than cgroup2's controllers.
V1_NAMES = {IO: "blkio"}


def v1_name(controller: str) -> str:
    return V1_NAMES.get(controller, controller)


# The name of a memory budget's group (memory_budget), as records and reports show it.
MEMORY_BUDGET = "memory budget"


class ShapeError(EncbenchError):
    """A shape's group could not be made or its limits did not hold."""


@dataclass(frozen=True)
class Limits:
    """One shape as the kernel is asked to enforce it."""

    name: str
    cpus: tuple[int, ...]
    cpu_quota: float | None = None  # CPUs' worth of time per period; None: no quota
    memory_mib: int | None = None
    iops: int | None = None  # reads and writes per second, each; None: no cap
    # The whole disk the cap applies to, per server (on_device): "MAJ:MIN" and its name.
    device: str = ""
    device_name: str = ""

    @property
    def controllers(self) -> frozenset[str]:
        """The controllers this shape needs (beyond the CPU counter's), as cgroup2 names
        them: "io" is v1's "blkio" (v1_name)."""
        wanted = {"cpuset"}
        wanted |= {"cpu"} if self.cpu_quota is not None else set()
        wanted |= {"memory"} if self.memory_mib is not None else set()
        wanted |= {IO} if self.iops is not None else set()
        return frozenset(wanted)

    @property
    def quota_us(self) -> int | None:
        return None if self.cpu_quota is None else round(self.cpu_quota * CFS_PERIOD_US)

    @property
    def memory_bytes(self) -> int | None:
        return None if self.memory_mib is None else self.memory_mib << 20


def limits(
    name: str,
    cpus: int,
    cpu_quota: float | None,
    memory_mib: int | None,
    usable: Sequence[int],
    iops: int | None = None,
) -> Limits:
    """A profile's shape on this machine: the first `cpus` of the CPUs encbench may use (the
    disk of an IOPS cap is each server's own: on_device)."""
    return Limits(name, tuple(sorted(usable))[:cpus], cpu_quota, memory_mib, iops)


def memory_budget(memory_mib: int, usable: Sequence[int]) -> Limits:
    """A server's memory, page cache included, capped with nothing else: every CPU encbench
    may use.  Why: a server that reads through the page cache (PostgreSQL; InnoDB on a
    filesystem that turns O_DIRECT into buffered I/O) would otherwise read its io-bound data
    from the machine's spare memory."""
    return limits(MEMORY_BUDGET, len(usable), None, memory_mib, usable)


# -- the disk an IOPS cap applies to -----------------------------------------------------------
@dataclass(frozen=True)
class Disk:
    name: str  # as /proc/diskstats names it: vda, nvme0n1, dm-0
    numbers: str  # "MAJ:MIN"


def whole_disk(device: str, sys_class_block: Path = SYS_CLASS_BLOCK) -> Disk | None:
    """The disk a block device belongs to (itself, or a partition's parent: the kernel
    refuses a throttle rule on a partition), or None where sysfs does not list it.  A
    device-mapper or md device is a disk of its own: its I/O is throttled there, where it is
    submitted."""
    try:
        node = (sys_class_block / device).resolve(strict=True)
        if (node / "partition").exists():
            node = node.parent
        return Disk(node.name, (node / "dev").read_text().strip())
    except OSError:
        return None


def disk_of(path: Path, sys_class_block: Path = SYS_CLASS_BLOCK) -> Disk | None:
    """The whole disk that holds `path`; None on a filesystem without one (tmpfs,
    overlay)."""
    device = disk_window.device_of(path)
    return whole_disk(device, sys_class_block) if device else None


def on_device(shape: Limits, data_dir: Path) -> Limits:
    """The shape for the server whose data directory this is: an IOPS cap names its disk.
    ShapeError where there is none to cap."""
    if shape.iops is None:
        return shape
    found = disk_of(data_dir)
    if found is None:
        raise ShapeError(
            f"shape {shape.name}: iops = {shape.iops} caps the disk that holds the data "
            "directory, and it is on none (tmpfs, overlay or a filesystem without one); put "
            "the results directory (--out) on a disk, or remove iops"
        )
    return replace(shape, device=found.numbers, device_name=found.name)


# -- CPU lists as the kernel writes them ("0-2,4") ---------------------------------------------
def parse_cpu_list(text: str) -> tuple[int, ...]:
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return tuple(sorted(cpus))


# -- where the groups go -----------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """The hierarchies a shaped group is made in: v2 one (UNIFIED); v1 one per controller,
    where two controllers may share a mount (`cpu,cpuacct`)."""

    version: int
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)


def find_layout(mounts: str, self_cgroup: str, needed: Iterable[str]) -> Layout | str:
    """The layout for these controllers, from the text of /proc/mounts and /proc/self/cgroup;
    or why there is none (a controller not mounted)."""
    v1: dict[str, Path] = {}
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        point, fstype, options = Path(parts[1]), parts[2], parts[3].split(",")
        if fstype == "cgroup2" and point == cgroup.V2_ROOT:
            own = cgroup.own_group(self_cgroup, lambda controllers, hid: hid == "0")
            if own is None:
                return "/proc/self/cgroup names no cgroup2 group of this process"
            return Layout(2, {UNIFIED: Hierarchy(2, point, own)})
        if fstype == "cgroup":
            for name in options:
                v1.setdefault(name, point)
    found: dict[str, Hierarchy] = {}
    for controller in (V1_COUNTER, *sorted({v1_name(c) for c in needed})):
        if controller not in v1:
            return (
                f"the cgroup controller {controller!r} is not mounted (no cgroup v1 hierarchy "
                "carries it, and /sys/fs/cgroup is not cgroup2)"
            )
        own = cgroup.own_group(self_cgroup, _carries(controller))
        if own is None:
            return f"/proc/self/cgroup names no {controller!r} group of this process"
        found[controller] = Hierarchy(1, v1[controller], own)
    return Layout(1, found)


def _carries(controller: str) -> Callable[[list[str], str], bool]:
    return lambda controllers, hid: controller in controllers


def detect(needed: Iterable[str]) -> Layout | str:
    try:
        return find_layout(cgroup.MOUNTS.read_text(), cgroup.SELF_CGROUP.read_text(), needed)
    except OSError as exc:
        return f"cannot read the cgroup mounts ({exc.strerror})"


def problem(needed: Iterable[str]) -> str | None:
    """Why shapes needing these controllers cannot be applied here, with the fix; None when
    they can.  Read-only: nothing is created or enabled."""
    needed = frozenset(needed)
    found = detect(needed)
    if isinstance(found, str):
        return f"server.shapes cannot be applied: {found}; mount it, or remove server.shapes"
    for hierarchy in found.hierarchies.values():
        if not os.access(hierarchy.parent, os.W_OK):
            return (
                f"server.shapes need cgroups and encbench may not make groups in "
                f"{hierarchy.parent} (not root); run encbench as root, or remove server.shapes"
            )
    if found.version == 2:
        return _v2_problem(found.hierarchies[UNIFIED], needed)
    return None


def _v2_problem(hierarchy: Hierarchy, needed: frozenset[str]) -> str | None:
    parent = hierarchy.parent
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        members = (parent / "cgroup.procs").read_text().split()
    except OSError as exc:
        return f"server.shapes cannot read the cgroup2 group {parent} ({exc.strerror})"
    missing = sorted(needed - available)
    if missing:
        return (
            f"server.shapes need the cgroup2 controller(s) {', '.join(missing)}, which "
            f"{parent} does not offer (cgroup.controllers); enable them in its parent's "
            "cgroup.subtree_control, or remove server.shapes"
        )
    if needed - enabled and hierarchy.own != "/" and members:
        # cgroup2's no-internal-process rule: a group that holds processes (encbench itself)
        # cannot hand cpu or memory to its children.
        return (
            f"server.shapes need {', '.join(sorted(needed - enabled))} enabled for the groups "
            f"below {parent}, which cgroup2 refuses while that group holds processes "
            "(encbench itself); start encbench in a group of its own whose parent delegates "
            "them (e.g. `systemd-run --scope -p Delegate=yes`), or remove server.shapes"
        )
    return None


def mem_total_mib(meminfo: str | None = None) -> int | None:
    """MemTotal in MiB, or None where it cannot be read."""
    try:
        text = meminfo if meminfo is not None else MEMINFO.read_text()
    except OSError:
        return None
    found = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
    return int(found[1]) // 1024 if found else None


# -- one server's shaped group -------------------------------------------------------------------
class ShapedGroup:
    """The cgroup(s) of one shaped server: create() before the server starts, launcher()
    before its command line, read_back() and confinement() after it started, remove() after
    it stopped.  Satisfies cgroup.CountingGroup, like the unshaped ServerCgroup."""

    def __init__(self, layout: Layout, server_name: str, shape: Limits) -> None:
        self.layout = layout
        self.limits = shape
        base = f"{cgroup.GROUP_PREFIX}{os.getpid()}-{server_name}-{secrets.token_hex(3)}"
        # One directory per hierarchy; a mount that carries two controllers gets one.
        self.by_controller: dict[str, ServerCgroup] = {}
        by_mount: dict[Path, ServerCgroup] = {}
        wanted = (
            [UNIFIED]
            if layout.version == 2
            else [V1_COUNTER, *sorted(v1_name(c) for c in shape.controllers)]
        )
        for controller in wanted:
            hierarchy = layout.hierarchies[controller]
            if hierarchy.mount not in by_mount:
                suffix = "" if layout.version == 2 else f"-{controller}"
                by_mount[hierarchy.mount] = ServerCgroup(hierarchy, server_name, base + suffix)
            self.by_controller[controller] = by_mount[hierarchy.mount]
        self.groups = list(by_mount.values())

    def _dir(self, controller: str) -> Path:
        key = UNIFIED if self.layout.version == 2 else v1_name(controller)
        return self.by_controller[key].path

    @property
    def counter(self) -> CpuCounter:
        # The group that counts: v2's one group, or v1's cpuacct directory.
        return self.by_controller[UNIFIED if self.layout.version == 2 else V1_COUNTER].counter

    @property
    def io_counter(self) -> IoCounter | None:
        """Where the server's reads and writes to its capped disk are counted; None without
        an IOPS cap (no blkio group on v1)."""
        if self.limits.iops is None:
            return None
        name = "io.stat" if self.layout.version == 2 else "blkio.throttle.io_serviced"
        return IoCounter(self._dir(IO) / name, self.limits.device)

    def page_cache_bytes(self) -> int | None:
        """The page cache charged to the server's memory group now (memory()); None without
        a memory limit."""
        if self.limits.memory_mib is None:
            return None
        return self.memory().page_cache_bytes

    def members(self) -> list[int]:
        """The pids in any of its groups (the counting group holds every one of them)."""
        return sorted({pid for group in self.groups for pid in group.members()})

    def create(self) -> None:
        """Make every directory (each recorded first) and write the limits; on failure
        nothing stays and ShapeError names the file the kernel refused."""
        if self.limits.iops is not None and not self.limits.device:
            raise ShapeError(f"shape {self.limits.name}: an IOPS cap without its disk")
        try:
            for group in self.groups:
                group.create()
            self._write_limits()
        except OSError as exc:
            self.remove(wait_s=0)
            where = f" {exc.filename}" if exc.filename else ""
            raise ShapeError(
                f"shape {self.limits.name}: the kernel refused{where}: {exc.strerror or exc}"
            ) from exc

    def _write_limits(self) -> None:
        s = self.limits
        if self.layout.version == 2:
            self._enable_controllers()
            d = self._dir(UNIFIED)
            _write(d / "cpuset.cpus", cpu_list(s.cpus))
            if s.quota_us is not None:
                _write(d / "cpu.max", f"{s.quota_us} {CFS_PERIOD_US}")
            if s.memory_bytes is not None:
                _write(d / "memory.max", str(s.memory_bytes))
            if s.iops is not None:
                _write(d / "io.max", f"{s.device} riops={s.iops} wiops={s.iops}")
            return
        cpuset = self._dir("cpuset")
        # A new v1 cpuset has no CPUs and no memory nodes: a task cannot join it until both
        # are set.  The memory nodes are those of encbench's own cpuset.
        _write(cpuset / "cpuset.cpus", cpu_list(s.cpus))
        mems = (self.layout.hierarchies["cpuset"].parent / "cpuset.mems").read_text().strip()
        _write(cpuset / "cpuset.mems", mems)
        if s.quota_us is not None:
            _write(self._dir("cpu") / "cpu.cfs_period_us", str(CFS_PERIOD_US))
            _write(self._dir("cpu") / "cpu.cfs_quota_us", str(s.quota_us))
        if s.memory_bytes is not None:
            _write(self._dir("memory") / "memory.limit_in_bytes", str(s.memory_bytes))
        if s.iops is not None:
            for name in V1_IOPS_FILES:
                _write(self._dir(IO) / name, f"{s.device} {s.iops}")

    def _enable_controllers(self) -> None:
        parent = self.layout.hierarchies[UNIFIED].parent
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        for controller in sorted(self.limits.controllers - enabled):
            _write(parent / "cgroup.subtree_control", f"+{controller}")

    def launcher(self, log: Path) -> list[str]:
        """What goes before the server's command line: it joins every group, then execs."""
        procs = [str(g.path / "cgroup.procs") for g in self.groups]
        return [sys.executable, "-I", "-S", str(ENTER_SCRIPT), str(log), *procs, "--"]

    def read_back(self) -> dict[str, str]:
        """The limits as the kernel holds them, file by file."""
        if self.layout.version == 2:
            d = self._dir(UNIFIED)
            files = [d / "cpuset.cpus.effective", d / "cpu.max", d / "memory.max"]
            files += [d / "io.max"] if self.limits.iops is not None else []
        else:
            files = [self._dir("cpuset") / "cpuset.cpus", self._dir("cpuset") / "cpuset.mems"]
            if "cpu" in self.limits.controllers:
                cpu = self._dir("cpu")
                files += [cpu / "cpu.cfs_quota_us", cpu / "cpu.cfs_period_us"]
            if "memory" in self.limits.controllers:
                files.append(self._dir("memory") / "memory.limit_in_bytes")
            if IO in self.limits.controllers:
                files += [self._dir(IO) / name for name in V1_IOPS_FILES]
        return {f.name: f.read_text().strip() for f in files}

    def memberships(self) -> list[tuple[str, str]]:
        """(controller, group path relative to its mount) the server must be in; v2: ("",
        path)."""
        out = []
        for controller, group in self.by_controller.items():
            h = group.hierarchy
            relative = "/" + str(group.path.relative_to(h.mount))
            out.append(("" if self.layout.version == 2 else controller, relative))
        return out

    def confinement(self, pid: int) -> dict[str, Any]:
        """The proof that the running server `pid` is confined: its allowed CPUs and its
        groups, with the limits read back.  ProofError when any is not the shape's."""
        allowed = proc.cpus_allowed(pid)
        membership = Path(f"/proc/{pid}/cgroup").read_text()
        read = self.read_back()
        problems = limit_problems(self.limits, read, self.layout.version)
        problems += confinement_problems(self.limits, allowed, membership, self.memberships())
        if problems:
            raise ProofError(f"shape {self.limits.name}: pid {pid} " + "; ".join(problems))
        shown: dict[str, Any] = {
            "cpus_allowed_list": allowed,
            "cgroups": [f"{c or 'cgroup2'}:{p}" for c, p in self.memberships()],
            "read_back": read,
        }
        if self.limits.iops is not None:
            shown["iops_device"] = f"{self.limits.device_name} ({self.limits.device})"
        return shown

    def memory(self) -> GroupMemory:
        """What the group's memory holds now (its memory.stat): a shape with a memory limit
        only."""
        if "memory" not in self.limits.controllers:
            raise ShapeError(f"shape {self.limits.name} has no memory limit to read under")
        path = self._dir("memory") / "memory.stat"
        return parse_memory_stat(path.read_text(), self.layout.version)

    def remove(self, wait_s: float = cgroup.RMDIR_WAIT_S) -> bool:
        """Every directory, once the server is gone; False if the kernel kept one (its record
        stays for `encbench clean`)."""
        return all([group.remove(wait_s) for group in self.groups])


@dataclass(frozen=True)
class GroupMemory:
    """A memory group's cache, as its memory.stat counts it.  The kernel's figure (v1
    `cache`, or `total_cache` with the group's children; v2 `file`) holds shared memory too
    (`shmem`: a PostgreSQL server's shared_buffers, which are not the page cache of its
    files); the page cache is the difference."""

    cache_bytes: int
    shmem_bytes: int

    @property
    def page_cache_bytes(self) -> int:
        return max(0, self.cache_bytes - self.shmem_bytes)


def parse_memory_stat(text: str, version: int) -> GroupMemory:
    """memory.stat's cache and shared memory (v1: the hierarchical `total_` figures where
    the kernel gives them); ValueError when the cache's line is missing."""
    held: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if value.strip().isdigit():
            held[name] = int(value)
    cache_names = ("file",) if version == 2 else ("total_cache", "cache")
    shmem_names = ("shmem",) if version == 2 else ("total_shmem", "shmem")
    cache = next((held[n] for n in cache_names if n in held), None)
    if cache is None:
        raise ValueError(f"memory.stat has no {' or '.join(cache_names)} line")
    shmem = next((held[n] for n in shmem_names if n in held), 0)
    return GroupMemory(cache, shmem)


def _write(path: Path, value: str) -> None:
    path.write_text(value + "\n")


def limit_problems(shape: Limits, read: dict[str, str], version: int) -> list[str]:
    """Where the limits read back differ from the shape's."""
    problems = []
    cpus_file = "cpuset.cpus.effective" if version == 2 else "cpuset.cpus"
    if parse_cpu_list(read.get(cpus_file, "")) != shape.cpus:
        problems.append(f"{cpus_file} is {read.get(cpus_file)!r}, not {cpu_list(shape.cpus)}")
    if shape.quota_us is not None:
        wanted = f"{shape.quota_us} {CFS_PERIOD_US}"
        if version == 2:
            quota = read.get("cpu.max", "")
        else:
            quota = f"{read.get('cpu.cfs_quota_us')} {read.get('cpu.cfs_period_us')}"
        if quota != wanted:
            problems.append(f"the CPU quota reads {quota!r}, not {wanted!r}")
    if shape.memory_bytes is not None:
        name = "memory.max" if version == 2 else "memory.limit_in_bytes"
        if read.get(name) != str(shape.memory_bytes):
            problems.append(f"{name} is {read.get(name)!r}, not {shape.memory_bytes}")
    if shape.iops is not None:
        problems += _iops_problems(shape, read, version)
    return problems


def _iops_problems(shape: Limits, read: dict[str, str], version: int) -> list[str]:
    """The cap as the kernel lists it: one line per disk, "MAJ:MIN N" in each v1 file, and
    "MAJ:MIN rbps=max wbps=max riops=N wiops=N" in v2's io.max."""
    if version == 2:
        wanted = {"riops": str(shape.iops), "wiops": str(shape.iops)}
        for line in read.get("io.max", "").splitlines():
            numbers, *pairs = line.split()
            held = dict(p.split("=", 1) for p in pairs if "=" in p)
            if numbers == shape.device and all(held.get(k) == v for k, v in wanted.items()):
                return []
        return [
            f"io.max is {read.get('io.max')!r}, not riops and wiops {shape.iops} on {shape.device}"
        ]
    return [
        f"{name} is {read.get(name)!r}, not {shape.device} {shape.iops}"
        for name in V1_IOPS_FILES
        if f"{shape.device} {shape.iops}" not in read.get(name, "").splitlines()
    ]


@dataclass(frozen=True)
class IoCounter:
    """The reads and writes (bios, as the cap counts them) a capped server's group submitted
    to its disk: v1 `blkio.throttle.io_serviced`, v2 `io.stat`."""

    path: Path
    device: str  # MAJ:MIN

    def read(self) -> tuple[int, int]:
        return parse_ios(self.path.read_text(), self.device)


def parse_ios(text: str, device: str) -> tuple[int, int]:
    """(reads, writes) of one disk in io_serviced ("254:0 Read 12" lines) or io.stat
    ("254:0 rbytes=… wbytes=… rios=12 wios=3 …"); (0, 0) before the group's first I/O there
    (the kernel lists a disk once it has counted some)."""
    reads = writes = 0
    for line in text.splitlines():
        numbers, *rest = line.split() or [""]
        if numbers != device:
            continue
        if len(rest) == 2 and rest[0] in ("Read", "Write"):
            if rest[0] == "Read":
                reads = int(rest[1])
            else:
                writes = int(rest[1])
            continue
        held = dict(p.split("=", 1) for p in rest if "=" in p)
        reads, writes = int(held.get("rios", reads)), int(held.get("wios", writes))
    return reads, writes


def confinement_problems(
    shape: Limits, cpus_allowed: str, proc_cgroup: str, memberships: list[tuple[str, str]]
) -> list[str]:
    """Where a process's Cpus_allowed_list and /proc/PID/cgroup show it outside the shape."""
    problems = []
    if parse_cpu_list(cpus_allowed) != shape.cpus:
        problems.append(f"may run on CPUs {cpus_allowed!r}, not {cpu_list(shape.cpus)}")
    lines = []
    for line in proc_cgroup.splitlines():
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        lines.append((hid, controllers.split(","), path))
    for controller, path in memberships:
        inside = any(
            p == path and (hid == "0" if not controller else controller in cs)
            for hid, cs, p in lines
        )
        if not inside:
            problems.append(f"is not in the {controller or 'cgroup2'} group {path}")
    return problems
