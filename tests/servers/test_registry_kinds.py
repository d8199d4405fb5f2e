"""The registry's kinds of server: an entry written before kinds is MariaDB's; a PostgreSQL
entry is found by its data directory, one argument of its command line, and a dead run's is
stopped as PostgreSQL stops (a fast shutdown, SIGINT, first); an entry of a kind this
version does not know is never signalled."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench import proc
from encbench.servers import registry


# -- the registry's kinds ---------------------------------------------------------------------
def test_an_entry_written_before_kinds_is_mariadbs(state_dir: Path, tmp_path: Path) -> None:
    entry = registry.Entry.new("plain", 999_999_999, tmp_path, tmp_path / "s", tmp_path / "my.cnf")
    old = {k: v for k, v in dataclasses.asdict(entry).items() if k not in ("kind", "datadir")}
    entry.path.write_text(json.dumps(old))
    [read] = registry.entries()
    assert read.kind == registry.MARIADB and read.command_mark == str(tmp_path / "my.cnf")
    pg = registry.Entry.new(
        "pg", 1, tmp_path, tmp_path / "s", tmp_path / "c", kind="postgresql", datadir=tmp_path / "d"
    )
    assert pg.command_mark == str(tmp_path / "d")
    with pytest.raises(ValueError, match="kind"):
        registry.Entry.new("x", 1, tmp_path, tmp_path, tmp_path, kind="oracle")


# A stand-in postmaster: it says which signal stopped it, and exits on SIGINT (a fast
# shutdown), as postgres does.
POSTMASTER = (
    "import signal, sys, time\n"
    "def stop(signum, frame):\n"
    "    print(signal.Signals(signum).name, flush=True)\n"
    "    sys.exit(0)\n"
    "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):\n"
    "    signal.signal(s, stop)\n"
    "print('up', flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture
def postmaster(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    datadir = tmp_path / "sandbox" / "data"
    datadir.mkdir(parents=True)
    (tmp_path / "sandbox" / registry.SANDBOX_MARKER).write_text("test\n")
    child = subprocess.Popen(
        [sys.executable, "-c", POSTMASTER, "-D", str(datadir)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "up"
    yield child, datadir
    if child.poll() is None:
        child.kill()
    child.wait()


def _dead_runs_entry(root: Path, pid: int, datadir: Path, kind: str) -> registry.Entry:
    entry = registry.Entry.new(
        "pg", pid, root, root / "no-socket-dir", datadir / "postgresql.conf",
        kind=kind, datadir=datadir,
    )  # fmt: skip
    me = proc.current_run()
    assert me.start_ticks is not None
    entry = dataclasses.replace(entry, owner_start_ticks=me.start_ticks - 1)  # a dead run
    registry.register(entry)
    return entry


def test_clean_stops_a_dead_runs_postgres_by_its_data_directory_with_a_fast_shutdown(
    state_dir: Path, postmaster: tuple[subprocess.Popen[str], Path]
) -> None:
    child, datadir = postmaster
    root = datadir.parent
    # The same pid recorded with another data directory is not ours to signal.
    other = _dead_runs_entry(root, child.pid, root / "elsewhere", "postgresql")
    assert not registry.server_running(other)
    registry.unregister(other)
    entry = _dead_runs_entry(root, child.pid, datadir, "postgresql")
    assert registry.server_running(entry)
    assert registry.clean() == [f"stopped pg (pid {child.pid})", f"removed {root}"]
    assert child.wait(timeout=10) == 0
    assert child.stdout is not None and child.stdout.read().strip() == "SIGINT"
    assert not root.exists() and registry.entries() == []


def test_an_entry_of_a_kind_this_version_does_not_know_is_never_signalled(
    state_dir: Path, postmaster: tuple[subprocess.Popen[str], Path]
) -> None:
    child, datadir = postmaster
    entry = _dead_runs_entry(datadir.parent, child.pid, datadir, "postgresql")
    registry.register(dataclasses.replace(entry, kind="db2"))
    registry.clean()
    assert child.poll() is None
    os.kill(child.pid, signal.SIGKILL)
