"""`encbench clean` with real servers: it never touches a live run's server, even when the
record's pid is alive, it stops a dead run's server once the pid in the record no longer has
the recorded start time, and it forgets records whose sandbox is gone."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench import proc
from encbench.servers import cgroup, registry
from encbench.servers.mariadb.sandbox import SandboxServer
from tests.helpers import encbench, server_of_a_killed_run, start_plain_server


@pytest.fixture
def server(tmp_path: Path, state_dir: Path) -> Iterator[SandboxServer]:
    """A server of this very process: a live run, as far as `encbench clean` can tell."""
    s = start_plain_server(tmp_path / "sandbox")
    try:
        yield s
    finally:
        s.destroy()


def clean(state_dir: Path) -> str:
    result = encbench("clean", env={"XDG_STATE_HOME": str(state_dir)}, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_clean_leaves_a_live_runs_server_running(server: SandboxServer, state_dir: Path) -> None:
    out = clean(state_dir)
    assert f"skipped plain (pid {server.pid}): its {proc.current_run()} is still going" in out
    assert server.query("SELECT 1") == [(1,)]
    assert len(registry.entries()) == 1


def test_clean_stops_a_server_whose_owner_pid_now_names_another_process(
    server: SandboxServer, state_dir: Path
) -> None:
    # The record says the run was our pid with another start time: the run died and its pid
    # went to someone else (us), so the server is an orphan.
    [entry] = registry.entries()
    assert entry.owner_start_ticks is not None
    registry.register(dataclasses.replace(entry, owner_start_ticks=entry.owner_start_ticks - 1))
    pid = server.pid
    out = clean(state_dir)
    assert f"stopped plain (pid {pid})" in out
    assert not proc.pid_alive(pid)
    assert not server.root.exists()
    assert registry.entries() == []


def test_clean_forgets_a_killed_runs_server_whose_sandbox_was_deleted(
    tmp_path: Path, state_dir: Path
) -> None:
    root = tmp_path / "sandbox"
    server_pid = server_of_a_killed_run(root, state_dir)
    # By hand, as a user would: the server is killed, its directory deleted.
    os.kill(server_pid, signal.SIGKILL)
    assert proc.wait_gone(server_pid, 30)
    shutil.rmtree(root)
    [entry] = registry._recorded()
    assert f"forgot plain (pid {server_pid}): {root} is gone" in clean(state_dir)
    assert not entry.path.exists()
    assert "nothing to clean" in clean(state_dir)


def test_clean_removes_the_cgroup_of_a_killed_runs_server(tmp_path: Path, state_dir: Path) -> None:
    if cgroup.detect() is None:
        pytest.skip("no cgroup hierarchy encbench may write here (not root?)")
    root = tmp_path / "sandbox"
    server_pid = server_of_a_killed_run(root, state_dir)
    [record] = list((state_dir / "encbench" / "cgroups").glob("*.json"))
    group = Path(json.loads(record.read_text())["path"])
    assert str(server_pid) in (group / "cgroup.procs").read_text().split()

    out = clean(state_dir)
    assert f"stopped plain (pid {server_pid})" in out
    assert f"removed cgroup {group}" in out
    assert not group.exists()
    assert not record.exists()
