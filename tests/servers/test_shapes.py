"""Instance shapes (servers/shapes.py): where the groups go on v1 and v2, what is written into
them, what is read back and what proves a process confined — against fake cgroup trees in
tmp_path (plain files stand in for the kernel's) — and the launcher that joins them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from encbench.errors import ProofError
from encbench.servers import shapes
from encbench.servers.cgroup import Hierarchy

# This VM: every controller its own v1 mount, and encbench's memory group a child of the
# runner's (hybrid: an empty cgroup2 at /sys/fs/cgroup/unified).
V1_MOUNTS = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
V1_SELF = "7:blkio:/\n4:memory:/process_api/53f1\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n"
HALF_CPU = shapes.Limits("half-cpu", (0,), cpu_quota=0.5, memory_mib=512)


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_a_v1_machine_gets_one_hierarchy_per_controller_memory_under_its_own_group() -> None:
    found = shapes.find_layout(V1_MOUNTS, V1_SELF, {"cpuset", "cpu", "memory"})
    assert isinstance(found, shapes.Layout) and found.version == 1
    h = found.hierarchies
    assert h["cpuset"] == Hierarchy(1, Path("/sys/fs/cgroup/cpuset"), "/")
    assert h["cpu"] == Hierarchy(1, Path("/sys/fs/cgroup/cpu"), "/")
    assert h["cpuacct"] == Hierarchy(1, Path("/sys/fs/cgroup/cpuacct"), "/")
    assert h["memory"].parent == Path("/sys/fs/cgroup/memory/process_api/53f1")


def test_a_missing_v1_controller_is_named() -> None:
    mounts = "cgroup /sys/fs/cgroup/cpuacct cgroup rw,cpuacct 0 0\n"
    found = shapes.find_layout(mounts, "2:cpuacct:/\n", {"cpuset"})
    assert found == (
        "the cgroup controller 'cpuset' is not mounted (no cgroup v1 hierarchy carries it, "
        "and /sys/fs/cgroup is not cgroup2)"
    )


def test_a_v2_machine_gets_its_one_group() -> None:
    mounts = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n"
    found = shapes.find_layout(mounts, "0::/user.slice/s.scope\n", {"cpuset", "memory"})
    assert found == shapes.Layout(
        2, {shapes.UNIFIED: Hierarchy(2, Path("/sys/fs/cgroup"), "/user.slice/s.scope")}
    )


def fake_v1(root: Path, combined: bool = False) -> shapes.Layout:
    """A v1 tree: encbench's groups at the top but memory's, one level down."""
    names = {"cpuacct": "cpu,cpuacct" if combined else "cpuacct", "cpuset": "cpuset"}
    names |= {"cpu": "cpu,cpuacct" if combined else "cpu", "memory": "memory", "blkio": "blkio"}
    own = {"memory": "/process_api/53f1"}
    hierarchies = {c: Hierarchy(1, root / m, own.get(c, "/")) for c, m in names.items()}
    for h in hierarchies.values():
        h.parent.mkdir(parents=True, exist_ok=True)
    (hierarchies["cpuset"].parent / "cpuset.mems").write_text("0\n")
    return shapes.Layout(1, hierarchies)


def test_v1_writes_cpuset_quota_and_memory_limit_each_in_its_hierarchy(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", HALF_CPU)
    group.create()
    dirs = {c: g.path for c, g in group.by_controller.items()}
    assert sorted(dirs) == ["cpu", "cpuacct", "cpuset", "memory"]
    assert dirs["memory"].parent == tmp_path / "memory" / "process_api" / "53f1"
    assert (dirs["cpuset"] / "cpuset.cpus").read_text() == "0\n"
    # written before any task joins: a v1 cpuset without memory nodes refuses tasks
    assert (dirs["cpuset"] / "cpuset.mems").read_text() == "0\n"
    assert (dirs["cpu"] / "cpu.cfs_period_us").read_text() == "100000\n"
    assert (dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "50000\n"
    assert (dirs["memory"] / "memory.limit_in_bytes").read_text() == f"{512 << 20}\n"
    assert group.counter.path == dirs["cpuacct"] / "cpuacct.usage"
    # every directory recorded for `encbench clean`, each under its own name
    assert len({g.record.file for g in group.groups}) == 4
    assert all(g.record.file.exists() for g in group.groups)
    launcher = group.launcher(tmp_path / "error.log")
    assert launcher[:4] == [sys.executable, "-I", "-S", str(shapes.ENTER_SCRIPT)]
    assert launcher[-1] == "--"
    assert sorted(launcher[5:-1]) == sorted(str(d / "cgroup.procs") for d in dirs.values())


def test_v1_without_quota_or_memory_makes_only_the_cpuset_and_the_counter(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", shapes.Limits("1cpu", (1,)))
    group.create()
    assert sorted(group.by_controller) == ["cpuacct", "cpuset"]
    assert list((tmp_path / "cpu").iterdir()) == []
    assert list((tmp_path / "memory" / "process_api" / "53f1").iterdir()) == []


def test_a_combined_cpu_cpuacct_mount_gets_one_directory_for_both(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path, combined=True), "plain", HALF_CPU)
    group.create()
    assert group.by_controller["cpu"] is group.by_controller["cpuacct"]
    assert len(group.groups) == 3
    assert (group.by_controller["cpu"].path / "cpu.cfs_quota_us").read_text() == "50000\n"


def test_v2_enables_the_controllers_and_writes_one_group(tmp_path: Path) -> None:
    parent = tmp_path / "encbench.scope"
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("cpuset\n")
    layout = shapes.Layout(2, {shapes.UNIFIED: Hierarchy(2, tmp_path, "/encbench.scope")})
    group = shapes.ShapedGroup(layout, "plain", HALF_CPU)
    group.create()
    (d,) = [g.path for g in group.groups]
    assert d.parent == parent
    assert (d / "cpuset.cpus").read_text() == "0\n"
    assert (d / "cpu.max").read_text() == "50000 100000\n"
    assert (d / "memory.max").read_text() == f"{512 << 20}\n"
    # cpuset was enabled already; the last one asked for is what a plain file keeps
    assert (parent / "cgroup.subtree_control").read_text() == "+memory\n"
    assert group.counter.path == d / "cpu.stat"
    assert group.memberships() == [("", f"/encbench.scope/{d.name}")]


def test_a_refused_write_leaves_no_directory_and_no_record(tmp_path: Path) -> None:
    layout = fake_v1(tmp_path)
    (layout.hierarchies["cpuset"].parent / "cpuset.mems").unlink()  # cannot be read
    group = shapes.ShapedGroup(layout, "plain", HALF_CPU)
    with pytest.raises(shapes.ShapeError, match="shape half-cpu: the kernel refused"):
        group.create()
    # The directories still empty are gone with their records; the cpuset, which got its
    # CPUs before the failure, is a non-empty directory here (on a cgroupfs rmdir takes the
    # kernel's files along): refused, so its record stays for `encbench clean`.
    gone = [g for g in group.groups if not g.path.exists()]
    assert len(gone) == 3 and not any(g.record.file.exists() for g in gone)
    (kept,) = [g for g in group.groups if g.path.exists()]
    assert kept is group.by_controller["cpuset"] and kept.record.file.exists()


def test_limits_read_back_must_be_the_shapes() -> None:
    read = {
        "cpuset.cpus": "0",
        "cpuset.mems": "0",
        "cpu.cfs_quota_us": "50000",
        "cpu.cfs_period_us": "100000",
        "memory.limit_in_bytes": str(512 << 20),
    }
    assert shapes.limit_problems(HALF_CPU, read, 1) == []
    wrong = {**read, "cpuset.cpus": "0-1", "cpu.cfs_quota_us": "-1"}
    assert shapes.limit_problems(HALF_CPU, wrong, 1) == [
        "cpuset.cpus is '0-1', not 0",
        "the CPU quota reads '-1 100000', not '50000 100000'",
    ]
    v2 = {"cpuset.cpus.effective": "0", "cpu.max": "50000 100000", "memory.max": "max"}
    assert shapes.limit_problems(HALF_CPU, v2, 2) == [f"memory.max is 'max', not {512 << 20}"]


def test_a_process_is_confined_only_with_the_shapes_cpus_and_every_group() -> None:
    memberships = [("cpuset", "/encbench-1-plain-ab-cpuset"), ("memory", "/p/encbench-1-m")]
    inside = "4:memory:/p/encbench-1-m\n3:cpuset:/encbench-1-plain-ab-cpuset\n0::/\n"
    assert shapes.confinement_problems(HALF_CPU, "0", inside, memberships) == []
    outside = "4:memory:/p\n3:cpuset:/encbench-1-plain-ab-cpuset\n0::/\n"
    assert shapes.confinement_problems(HALF_CPU, "0-1", outside, memberships) == [
        "may run on CPUs '0-1', not 0",
        "is not in the memory group /p/encbench-1-m",
    ]


def test_confinement_of_this_process_fails_in_a_group_it_is_not_in(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", HALF_CPU)
    group.create()
    with pytest.raises(ProofError, match=f"shape half-cpu: pid {os.getpid()} .*is not in the"):
        group.confinement(os.getpid())


@pytest.mark.parametrize(
    ("text", "cpus"), [("0", (0,)), ("0-3", (0, 1, 2, 3)), ("0,2-3\n", (0, 2, 3)), ("", ())]
)
def test_cpu_lists_are_read_as_the_kernel_writes_them(text: str, cpus: tuple[int, ...]) -> None:
    assert shapes.parse_cpu_list(text) == cpus


def test_a_shape_takes_the_first_cpus_this_process_may_use() -> None:
    assert shapes.limits("x", 2, None, None, [3, 1, 2]).cpus == (1, 2)


def test_v2_refuses_controllers_a_group_with_processes_cannot_hand_down(tmp_path: Path) -> None:
    parent = tmp_path / "user.slice"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpuset cpu memory\n")
    (parent / "cgroup.subtree_control").write_text("\n")
    (parent / "cgroup.procs").write_text("4242\n")
    why = shapes._v2_problem(Hierarchy(2, tmp_path, "/user.slice"), frozenset({"cpu"}))
    assert why is not None and "cgroup2 refuses while that group holds processes" in why
    (parent / "cgroup.controllers").write_text("cpuset\n")
    why = shapes._v2_problem(Hierarchy(2, tmp_path, "/user.slice"), frozenset({"memory"}))
    assert why is not None and why.startswith("server.shapes need the cgroup2 controller(s) memory")


def enter(tmp_path: Path, *procs: Path) -> subprocess.CompletedProcess[str]:
    log = tmp_path / "error.log"
    argv = [sys.executable, "-I", "-S", str(shapes.ENTER_SCRIPT), str(log), *map(str, procs)]
    return subprocess.run(
        [*argv, "--", sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_launcher_writes_its_own_pid_then_becomes_the_command(tmp_path: Path) -> None:
    procs = [tmp_path / "a.procs", tmp_path / "b.procs"]
    done = enter(tmp_path, *procs)
    assert done.returncode == 0, done.stderr
    pid = done.stdout.strip()  # the command's pid: the same process, after exec
    assert [p.read_text() for p in procs] == [f"{pid}\n", f"{pid}\n"]


def test_the_launcher_refused_by_the_kernel_says_so_in_the_log_and_does_not_run(
    tmp_path: Path,
) -> None:
    done = enter(tmp_path, tmp_path / "missing" / "cgroup.procs")
    assert done.returncode == 126 and done.stdout == ""
    line = (tmp_path / "error.log").read_text()
    assert line.startswith(f"encbench: cannot join the cgroup {tmp_path / 'missing'}: ")


def test_without_root_shapes_are_refused_with_the_reason_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mounts, self_cgroup = tmp_path / "mounts", tmp_path / "cgroup"
    mounts.write_text(V1_MOUNTS)
    self_cgroup.write_text(V1_SELF)
    monkeypatch.setattr(shapes.cgroup, "MOUNTS", mounts)
    monkeypatch.setattr(shapes.cgroup, "SELF_CGROUP", self_cgroup)
    monkeypatch.setattr(shapes.os, "access", lambda path, mode: False)
    assert shapes.problem({"cpuset"}) == (
        "server.shapes need cgroups and encbench may not make groups in "
        "/sys/fs/cgroup/cpuacct (not root); run encbench as root, or remove server.shapes"
    )
    mounts.write_text("cgroup /sys/fs/cgroup/cpuacct cgroup rw,cpuacct 0 0\n")
    assert shapes.problem({"cpuset", "memory"}) == (
        "server.shapes cannot be applied: the cgroup controller 'cpuset' is not mounted (no "
        "cgroup v1 hierarchy carries it, and /sys/fs/cgroup is not cgroup2); mount it, or "
        "remove server.shapes"
    )


# -- the IOPS cap ------------------------------------------------------------------------------
CAPPED = shapes.Limits("iops50", (0,), iops=50, device="254:0", device_name="vda")


def test_an_iops_cap_needs_the_io_controller_which_v1_calls_blkio() -> None:
    assert CAPPED.controllers == {"cpuset", "io"}
    found = shapes.find_layout(V1_MOUNTS, V1_SELF, CAPPED.controllers)
    assert isinstance(found, shapes.Layout)
    assert found.hierarchies["blkio"] == Hierarchy(1, Path("/sys/fs/cgroup/blkio"), "/")
    without = V1_MOUNTS.replace("cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n", "")
    assert shapes.find_layout(without, V1_SELF, CAPPED.controllers) == (
        "the cgroup controller 'blkio' is not mounted (no cgroup v1 hierarchy carries it, "
        "and /sys/fs/cgroup is not cgroup2)"
    )


def test_v1_caps_reads_and_writes_on_the_disk_and_counts_them_in_blkio(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", CAPPED)
    group.create()
    blkio = group.by_controller["blkio"].path
    assert blkio.parent == tmp_path / "blkio" and blkio.name.endswith("-blkio")
    assert (blkio / "blkio.throttle.read_iops_device").read_text() == "254:0 50\n"
    assert (blkio / "blkio.throttle.write_iops_device").read_text() == "254:0 50\n"
    read = group.read_back()
    assert read["blkio.throttle.read_iops_device"] == "254:0 50"
    assert shapes.limit_problems(CAPPED, read, 1) == []
    assert ("blkio", f"/{blkio.name}") in group.memberships()
    counter = group.io_counter
    assert counter == shapes.IoCounter(blkio / "blkio.throttle.io_serviced", "254:0")
    (blkio / "blkio.throttle.io_serviced").write_text(
        "7:0 Read 9\n254:0 Read 120\n254:0 Write 7\n254:0 Sync 127\n254:0 Total 127\nTotal 136\n"
    )
    assert counter.read() == (120, 7)


def test_v2_caps_both_in_io_max_and_counts_them_in_io_stat(tmp_path: Path) -> None:
    parent = tmp_path / "encbench.scope"
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("cpuset\n")
    layout = shapes.Layout(2, {shapes.UNIFIED: Hierarchy(2, tmp_path, "/encbench.scope")})
    group = shapes.ShapedGroup(layout, "plain", CAPPED)
    group.create()
    (d,) = [g.path for g in group.groups]
    assert (d / "io.max").read_text() == "254:0 riops=50 wiops=50\n"
    assert (parent / "cgroup.subtree_control").read_text() == "+io\n"
    (d / "io.stat").write_text(
        "7:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
        "254:0 rbytes=1966080 wbytes=49152 rios=120 wios=7 dbytes=0 dios=0\n"
    )
    assert group.io_counter is not None and group.io_counter.read() == (120, 7)


def test_no_cap_no_blkio_group_and_no_counter(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", HALF_CPU)
    group.create()
    assert "blkio" not in group.by_controller and group.io_counter is None
    assert list((tmp_path / "blkio").iterdir()) == []


def test_a_cap_without_its_disk_is_refused_before_any_group(tmp_path: Path) -> None:
    group = shapes.ShapedGroup(fake_v1(tmp_path), "plain", shapes.Limits("x", (0,), iops=50))
    with pytest.raises(shapes.ShapeError, match="shape x: an IOPS cap without its disk"):
        group.create()
    assert list((tmp_path / "cpuset").iterdir()) == [tmp_path / "cpuset" / "cpuset.mems"]


def test_a_cap_read_back_must_be_the_shapes_on_its_disk() -> None:
    v1 = {name: "254:0 50" for name in shapes.V1_IOPS_FILES} | {"cpuset.cpus": "0"}
    assert shapes.limit_problems(CAPPED, v1, 1) == []
    other_disk = {**v1, "blkio.throttle.write_iops_device": "7:0 50"}
    assert shapes.limit_problems(CAPPED, other_disk, 1) == [
        "blkio.throttle.write_iops_device is '7:0 50', not 254:0 50"
    ]
    v2 = {"cpuset.cpus.effective": "0", "io.max": "254:0 rbps=max wbps=max riops=50 wiops=50"}
    assert shapes.limit_problems(CAPPED, v2, 2) == []
    reads_only = {**v2, "io.max": "254:0 rbps=max wbps=max riops=50 wiops=max"}
    assert shapes.limit_problems(CAPPED, reads_only, 2) == [
        "io.max is '254:0 rbps=max wbps=max riops=50 wiops=max', not riops and wiops 50 on 254:0"
    ]


def test_a_group_without_io_yet_counts_none() -> None:
    assert shapes.parse_ios("", "254:0") == (0, 0)
    assert shapes.parse_ios("Total 0\n", "254:0") == (0, 0)


def fake_sys_block(root: Path) -> Path:
    """/sys/class/block as the kernel lays it out: links into /sys/devices, a partition a
    directory inside its disk's, with a `partition` file."""
    devices = root / "devices" / "virtio1" / "block"
    disk = devices / "vda"
    (disk / "vda1").mkdir(parents=True)
    (disk / "dev").write_text("254:0\n")
    (disk / "vda1" / "dev").write_text("254:1\n")
    (disk / "vda1" / "partition").write_text("1\n")
    dm = root / "devices" / "virtual" / "block" / "dm-0"
    dm.mkdir(parents=True)
    (dm / "dev").write_text("252:0\n")
    links = root / "class" / "block"
    links.mkdir(parents=True)
    for node in (disk, disk / "vda1", dm):
        (links / node.name).symlink_to(node)
    return links


def test_a_cap_names_the_whole_disk_never_a_partition(tmp_path: Path) -> None:
    links = fake_sys_block(tmp_path)
    assert shapes.whole_disk("vda1", links) == shapes.Disk("vda", "254:0")
    assert shapes.whole_disk("vda", links) == shapes.Disk("vda", "254:0")
    assert shapes.whole_disk("dm-0", links) == shapes.Disk("dm-0", "252:0")
    assert shapes.whole_disk("sdz", links) is None


def test_a_cap_on_a_directory_without_a_disk_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shapes.disk_window, "device_of", lambda path: None)
    with pytest.raises(shapes.ShapeError, match=r"iops = 50 caps the disk .* it is on none"):
        shapes.on_device(shapes.Limits("x", (0,), iops=50), tmp_path)
    assert shapes.on_device(HALF_CPU, tmp_path) is HALF_CPU


def test_a_cap_on_this_machine_names_the_disk_of_the_directory(tmp_path: Path) -> None:
    found = shapes.disk_of(tmp_path)
    if found is None:
        pytest.skip("tmp_path is on no block device here (tmpfs or overlay)")
    capped = shapes.on_device(shapes.Limits("x", (0,), iops=50), tmp_path)
    assert (capped.device, capped.device_name) == (found.numbers, found.name)
    sysfs = Path("/sys/class/block") / found.name
    assert (sysfs / "dev").read_text().strip() == found.numbers
    assert not (sysfs / "partition").exists()
