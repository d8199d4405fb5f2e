"""Faults of a real run, through the CLI as a user meets them: a server that dies in the
middle of a run.  (A second run on a live results directory, and `encbench clean` during a
run: tests/integration/test_run.py, during its short paired run.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from encbench.servers import registry
from tests.helpers import processes_owned_by, tiny_profile


def runs_of(out: Path) -> list[dict]:  # type: ignore[type-arg]
    path = out / "at-rest.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def start_run(prof: Path, out: Path, state_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(prof), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )


def wait_for_runs(child: subprocess.Popen[str], out: Path, count: int) -> None:
    deadline = time.monotonic() + 180
    while len(runs_of(out)) < count and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.2)
    assert len(runs_of(out)) >= count, child.stderr.read() if child.stderr else ""


def test_a_server_that_dies_mid_run_ends_it_in_one_line_naming_the_server(
    tmp_path: Path, state_dir: Path
) -> None:
    prof = tiny_profile(tmp_path / "tiny.toml", min_rounds=30, max_rounds=30)
    out = tmp_path / "out"
    child = start_run(prof, out, state_dir)
    wait_for_runs(child, out, 2)
    (entry,) = [e for e in registry.entries() if e.name == "encrypted"]
    os.kill(entry.server_pid, signal.SIGKILL)  # the sandbox server this test's run started
    _, stderr = child.communicate(timeout=300)

    assert child.returncode == 1, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("encbench: ")
    assert "the encrypted server" in last and "died" in last and "SIGKILL" in last
    assert "error.log" in last  # where the tail of its log and the command are
    assert len(runs_of(out)) >= 2, "the runs measured before the failure are kept"
    assert processes_owned_by(child.pid) == []
    assert registry.entries() == []
