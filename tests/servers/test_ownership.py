"""Nothing left, nothing touched: a run is known by its pid and that pid's start time, so
`encbench clean` stops what dead runs left and never what a live run (or a stranger who got a
recycled pid) owns; and one stop, whose SIGKILL a second signal cannot cut short."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from encbench import proc
from encbench.net import netns
from encbench.servers import mariadb as mariadb_kind
from encbench.servers import registry

SLEEPER = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)"
)


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; whatever is left of them is killed at the end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait()


def start(
    started: list[subprocess.Popen[bytes]], *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A python child in its own group that ignores SIGTERM (only SIGKILL stops it); extra
    args only show up in its command line."""
    child = subprocess.Popen(
        [sys.executable, "-c", SLEEPER, *args],
        env=env,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    started.append(child)
    assert child.stdout is not None
    assert child.stdout.readline() == b"ready\n"  # its SIGTERM handler is in place
    return child


def gone(child: subprocess.Popen[bytes], timeout_s: float = 10) -> bool:
    try:
        child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def recycled() -> proc.RunIdentity:
    """Our own pid with another start time: what a dead run looks like once its pid went to
    someone else (here: us)."""
    me = proc.current_run()
    assert me.start_ticks is not None
    return dataclasses.replace(me, start_ticks=me.start_ticks - 1)


# -- identity ---------------------------------------------------------------------------------
def test_start_ticks_are_field_22_of_proc_stat() -> None:
    fields = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()
    assert proc.start_ticks(os.getpid()) == int(fields[19])


def test_this_run_is_alive_and_the_same_pid_with_another_start_time_is_not() -> None:
    assert proc.current_run().alive()
    assert not recycled().alive()


def test_the_marker_names_the_run_and_old_bare_pid_markers_still_parse() -> None:
    proc.set_run_id("/results/x:y")
    try:
        me = proc.current_run()
        assert proc.RunIdentity.from_marker(me.marker()) == me
        assert proc.child_env()[proc.OWNER_ENV] == me.marker()
    finally:
        proc.set_run_id("")
    assert proc.RunIdentity.from_marker("123") == proc.RunIdentity("", 123, None)
    assert proc.RunIdentity.from_marker("x") is None


def test_a_child_started_with_its_own_streams_has_its_own_session_and_the_runs_marker() -> None:
    code = f"import os; print(os.getsid(0), os.environ[{proc.OWNER_ENV!r}], os.environ['EXTRA'])"
    child = proc.start_streams(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, env={"EXTRA": "kept"}
    )
    out, _ = child.communicate(timeout=30)
    session, marker, extra = out.decode().split()
    assert int(session) == child.pid  # its own session: stop_group stops it, never us
    assert marker == proc.current_run().marker()  # `encbench clean` knows whose it is
    assert extra == "kept"


def test_busy_cpu_leaves_out_idle_iowait_and_interrupts() -> None:
    times = SimpleNamespace(
        user=1112.72, nice=0.0, system=578.75, idle=1084.9, iowait=116.63, irq=0.0,
        softirq=30.25, steal=1.14,
    )  # fmt: skip
    busy, steal = proc.busy_and_steal(times)
    assert busy == pytest.approx(1112.72 + 578.75)
    assert steal == pytest.approx(1.14)


# -- registry ---------------------------------------------------------------------------------
def sandbox(tmp_path: Path, name: str = "plain") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / registry.SANDBOX_MARKER).write_text("test\n")
    (root / "my.cnf").write_text("")
    return root


def entry_for(root: Path, server_pid: int, **owner: Any) -> registry.Entry:
    entry = registry.Entry.new(root.name, server_pid, root, root / "no-socket-dir", root / "my.cnf")
    entry = dataclasses.replace(entry, **owner)
    registry.register(entry)
    return entry


def test_clean_leaves_the_sandboxes_of_this_very_run_alone(state_dir: Path, tmp_path: Path) -> None:
    root = sandbox(tmp_path)
    entry = entry_for(root, 999_999_999)
    actions = registry.clean()
    assert actions == [f"skipped plain (pid 999999999): its {proc.current_run()} is still going"]
    assert registry.entries() == [entry]
    assert root.exists()


def test_an_owner_whose_pid_lives_with_another_start_time_is_a_dead_run(
    state_dir: Path, tmp_path: Path
) -> None:
    root = sandbox(tmp_path)
    owner = recycled()
    entry_for(root, 999_999_999, owner_start_ticks=owner.start_ticks)
    assert registry.clean() == [f"removed {root}"]
    assert not root.exists()
    assert registry.entries() == []


def test_clean_stops_the_server_of_a_dead_run_but_not_a_stranger_with_its_pid(
    state_dir: Path,
    tmp_path: Path,
    children: list[subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = sandbox(tmp_path)
    server = start(children, f"--defaults-file={root / 'my.cnf'}")
    owner = recycled()
    entry = entry_for(root, server.pid, owner_start_ticks=owner.start_ticks)
    assert registry.server_running(entry)
    monkeypatch.setattr(mariadb_kind, "SERVER_STOP", ((signal.SIGTERM, 0.5),))
    # Same pid, same command line, another start time: not the server that was recorded.
    assert entry.server_start_ticks is not None
    assert not registry.server_running(
        dataclasses.replace(entry, server_start_ticks=entry.server_start_ticks + 1)
    )
    assert registry.clean() == [f"stopped plain (pid {server.pid})", f"removed {root}"]
    assert gone(server)  # it ignores SIGTERM: stop_group escalated to SIGKILL


def test_clean_forgets_entries_whose_sandbox_is_gone_even_for_a_live_run(
    state_dir: Path, tmp_path: Path
) -> None:
    root = sandbox(tmp_path)
    entry = entry_for(root, 999_999_999)
    for path in root.iterdir():
        path.unlink()
    root.rmdir()  # deleted by hand
    assert registry.clean() == [f"forgot plain (pid 999999999): {root} is gone"]
    assert not entry.path.exists()


def test_entries_drops_what_is_stale_but_keeps_a_running_server_without_its_directory(
    state_dir: Path, tmp_path: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    stale = entry_for(tmp_path / "gone", 999_999_999)
    root = sandbox(tmp_path)
    server = start(children, f"--defaults-file={root / 'my.cnf'}")
    running = entry_for(root, server.pid)
    (root / "my.cnf").unlink()
    (root / registry.SANDBOX_MARKER).unlink()
    root.rmdir()
    assert registry.entries() == [running]
    assert not stale.path.exists()


def test_removing_a_sandbox_removes_its_registry_entries(state_dir: Path, tmp_path: Path) -> None:
    root, other = sandbox(tmp_path), sandbox(tmp_path, "encrypted")
    entry = entry_for(root, 999_999_999)
    kept = entry_for(other, 999_999_998)
    registry.remove_sandbox_files(root)
    assert not root.exists()
    assert not entry.path.exists()
    assert registry.entries() == [kept]


# -- namespaces -------------------------------------------------------------------------------
def test_clean_stale_removes_links_whose_owner_pid_was_recycled(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    removed: list[str] = []
    monkeypatch.setattr(netns, "_remove", lambda link: removed.append(link.id) or [])
    monkeypatch.setattr(netns, "namespaces", lambda: [])
    dead, live = netns._new_link(0, None), netns._new_link(0, None)
    dead = dataclasses.replace(dead, owner_start_ticks=recycled().start_ticks)
    for link in (dead, live):
        netns._record(link).write_text(json.dumps(dataclasses.asdict(link)))
    assert netns.clean_stale() == [f"forgot link {dead.id} of dead {dead.owner}"]
    assert removed == [dead.id]
    assert netns.recorded() == [live]


def test_a_links_record_outlives_a_removal_that_failed_so_the_next_clean_tries_again(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = dataclasses.replace(netns._new_link(0, None), owner_start_ticks=recycled().start_ticks)
    netns._record(dead).write_text(json.dumps(dataclasses.asdict(dead)))
    present = [dead.client_ns, dead.server_ns]  # `ip netns del` failed: both still there
    monkeypatch.setattr(netns, "_remove", lambda link: [])
    monkeypatch.setattr(netns, "namespaces", lambda: list(present))

    assert netns.clean_stale() == [
        f"kept the record of link {dead.id}: its namespaces are still there"
    ]
    assert netns.recorded() == [dead]

    present.clear()  # the next attempt removed them
    assert netns.clean_stale() == [f"forgot link {dead.id} of dead {dead.owner}"]
    assert netns.recorded() == []


# -- orphans ----------------------------------------------------------------------------------
def only(monkeypatch: pytest.MonkeyPatch, pids: set[int]) -> None:
    """Let proc see only these processes: other tests on this machine may own orphans that
    they are about to check."""
    real = psutil.process_iter

    def filtered(*args: Any, **kwargs: Any) -> Iterator[psutil.Process]:
        return (p for p in real(*args, **kwargs) if p.pid in pids)

    monkeypatch.setattr(proc.psutil, "process_iter", filtered)


def test_stop_orphans_ignores_processes_of_a_live_run_and_stops_those_of_a_dead_one(
    monkeypatch: pytest.MonkeyPatch, children: list[subprocess.Popen[bytes]]
) -> None:
    ours = start(children, env=proc.child_env())
    dead = start(children, env={**os.environ, proc.OWNER_ENV: recycled().marker()})
    only(monkeypatch, {ours.pid, dead.pid})
    monkeypatch.setattr(proc, "ORPHAN_STOP", ((signal.SIGTERM, 0.5),))
    assert [p.pid for p, _ in proc.orphans()] == [dead.pid]
    [action] = proc.stop_orphans()
    assert action.startswith(f"stopped pid {dead.pid} left by a dead run")
    assert gone(dead)
    assert ours.poll() is None


def test_an_orphan_of_another_state_is_not_this_cleans_to_end(
    monkeypatch: pytest.MonkeyPatch, children: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    # Another user's run (or another test's), killed: its state is not ours.
    marker = recycled().marker()
    theirs = start(
        children,
        env={**os.environ, proc.OWNER_ENV: marker, "XDG_STATE_HOME": str(tmp_path / "theirs")},
    )
    mine = start(
        children,
        env={**os.environ, proc.OWNER_ENV: marker, "XDG_STATE_HOME": str(tmp_path / "mine")},
    )
    only(monkeypatch, {theirs.pid, mine.pid})
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "mine"))
    assert [p.pid for p, _ in proc.orphans()] == [mine.pid]
