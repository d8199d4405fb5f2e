"""Finding the cgroup hierarchy, reading CPU counters, and `encbench clean` of a dead run's
groups (plain directories stand in for cgroups: rmdir is what both get)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from encbench import proc
from encbench.servers import cgroup

# This VM: cgroup v1 with cpuacct, plus an empty v2 hierarchy beside it (hybrid).
V1_MOUNTS = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
V1_SELF = "4:memory:/process_api/70268cc3\n2:cpuacct:/runner\n1:cpu:/\n0::/\n"
V2_MOUNTS = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
V2_SELF = "0::/user.slice/session-3.scope\n"


def test_a_v1_machine_uses_the_cpuacct_hierarchy_and_its_own_group_there() -> None:
    found = cgroup.find_hierarchy(V1_MOUNTS, V1_SELF)
    assert found == cgroup.Hierarchy(1, Path("/sys/fs/cgroup/cpuacct"), "/runner")
    assert found.parent == Path("/sys/fs/cgroup/cpuacct/runner")


def test_a_combined_cpu_cpuacct_v1_mount_is_found() -> None:
    mounts = "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"
    found = cgroup.find_hierarchy(mounts, "3:cpu,cpuacct:/\n")
    assert found == cgroup.Hierarchy(1, Path("/sys/fs/cgroup/cpu,cpuacct"), "/")


def test_a_v2_machine_uses_the_unified_hierarchy() -> None:
    found = cgroup.find_hierarchy(V2_MOUNTS, V2_SELF)
    assert found == cgroup.Hierarchy(2, Path("/sys/fs/cgroup"), "/user.slice/session-3.scope")


def test_no_hierarchy_without_cpuacct_or_a_v2_root() -> None:
    mounts = "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
    assert cgroup.find_hierarchy(mounts, "4:memory:/\n") is None


@pytest.mark.parametrize(
    ("kind", "text", "raw"),
    [
        ("ns", "158872231\n", 158872231),
        ("usage_usec", "usage_usec 5123\nuser_usec 4000\nsystem_usec 1123\n", 5123),
        # a command name with a space and a parenthesis: fields are counted from the last ")"
        ("proc_stat_ticks", "42 (my (od) d) S 1 42 42 0 -1 4194560 9 0 0 0 17 5 0 0 20", 22),
    ],
)
def test_each_counter_kind_is_read_in_its_unit(kind: str, text: str, raw: int) -> None:
    assert cgroup.parse_counter(kind, text) == raw


def test_the_proc_counter_reads_this_process(tmp_path: Path) -> None:
    counter = cgroup.proc_stat_counter(os.getpid())
    assert counter.source == cgroup.SOURCE_PROC
    assert counter.read_s() == pytest.approx(proc.cpu_seconds(os.getpid()), abs=0.05)


def record(state: Path, path: Path, owner: proc.RunIdentity) -> cgroup.Record:
    rec = cgroup.Record(str(path), owner.run_id, owner.pid, owner.start_ticks)
    rec.file.write_text(json.dumps(asdict(rec)))
    return rec


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def dead_run() -> proc.RunIdentity:
    me = proc.current_run()
    assert me.start_ticks is not None
    return proc.RunIdentity("gone", me.pid, me.start_ticks - 1)  # our pid, another process


def test_clean_removes_a_dead_runs_group_and_its_record(tmp_path: Path, state: Path) -> None:
    group = tmp_path / "encbench-123-plain-abcdef"
    group.mkdir()
    rec = record(state, group, dead_run())
    assert cgroup.clean_stale() == [f"removed cgroup {group}"]
    assert not group.exists()
    assert not rec.file.exists()


def test_clean_leaves_a_live_runs_group(tmp_path: Path, state: Path) -> None:
    group = tmp_path / "encbench-123-plain-abcdef"
    group.mkdir()
    rec = record(state, group, proc.current_run())
    assert cgroup.clean_stale() == []
    assert group.exists() and rec.file.exists()
    assert cgroup.clean_stale(include_live_runs=True) == [f"removed cgroup {group}"]


def test_clean_never_removes_a_group_encbench_did_not_name(tmp_path: Path, state: Path) -> None:
    group = tmp_path / "someone-elses"
    group.mkdir()
    rec = record(state, group, dead_run())
    assert cgroup.clean_stale() == []
    assert group.exists()
    assert not rec.file.exists()  # the odd record is forgotten, the directory untouched


def test_a_group_that_cannot_be_removed_is_reported_and_kept(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = tmp_path / "encbench-123-plain-abcdef"
    group.mkdir()
    (group / "cgroup.procs").write_text("4242\n")  # a non-empty directory: rmdir refuses
    rec = record(state, group, dead_run())
    killed: list[list[int]] = []
    monkeypatch.setattr(proc, "kill_pids", lambda pids: killed.append(list(pids)))
    monkeypatch.setattr(cgroup, "RMDIR_WAIT_S", 0.1)
    assert cgroup.clean_stale() == [f"kept cgroup {group}: processes 4242 still in it"]
    assert rec.file.exists()
    # What the dead run left in its own group was ended by pid before the second try.
    assert killed == [[4242]]


def test_a_dead_runs_group_still_holding_its_process_is_emptied_and_removed(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server killed before its run recorded it: not in the sandbox registry, but in its
    # group; the kernel keeps the group until that process is gone.
    group = tmp_path / "encbench-123-plain-abcdef"
    group.mkdir()
    (group / "cgroup.procs").write_text("4242\n")
    rec = record(state, group, dead_run())

    def kill(pids: list[int]) -> None:
        assert pids == [4242]
        (group / "cgroup.procs").unlink()  # the process is gone: rmdir succeeds

    monkeypatch.setattr(proc, "kill_pids", kill)
    assert cgroup.clean_stale() == [f"removed cgroup {group}"]
    assert not group.exists() and not rec.file.exists()
