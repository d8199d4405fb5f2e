"""The operations study end to end through the CLI (profile smoke-operations at one
encryption thread count, about a minute): every operation measured on real servers, plain
and encrypted (key rotation: rotating and not, both encrypted, with encbench's own key
plugin built for the run), its proof per run, the report's table of times, and nothing
left behind.

One real run serves both tests: interrupted (SIGINT) during its first crash recovery, then
finished by `--resume`.  The interrupt test checks what the interrupt left; the smoke test
checks the finished results, every operation of which the resumed session measured or kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import pytest

from encbench.servers import registry
from tests.helpers import encbench, processes_owned_by


@dataclass(frozen=True)
class InterruptedThenResumed:
    out: Path
    # When SIGINT stopped the run: its exit, stderr, and what it left
    stopped_returncode: int
    stopped_stderr: str
    left_running: list[str]
    sandbox_left: bool
    registered_when_stopped: list[object]
    kept: list[str]  # operations.jsonl's lines then
    # `encbench run --resume` of the same directory
    resumed: subprocess.CompletedProcess[str]
    registered_when_finished: list[object]


def smoke_operations_one_encryption_thread(directory: Path) -> Path:
    """smoke-operations with encrypt-existing at 1 encryption thread, not also at 2: a count
    only sets innodb_encryption_threads and names a cell, which
    tests/studies/operations/test_operations.py
    proves with the real parser.  No round measured again for the machine's other load
    (mechanics, not noise, as tests/helpers.tiny_profile), so the interrupt below comes at
    the run's first crash recovery."""
    smoke = (files("encbench.profiles.builtin") / "smoke-operations.toml").read_text()
    assert "\nencryption_threads = [1, 2]\n" in smoke and smoke.count("[operations]\n") == 1
    profile = directory / "smoke-operations-t1.toml"
    profile.write_text(
        smoke.replace('"smoke-operations"', '"smoke-operations-t1"')
        .replace("\nencryption_threads = [1, 2]\n", "\nencryption_threads = [1]\n")
        .replace("[operations]\n", "[operations]\ninterference_max_pct = 100\n")
    )
    return profile


@pytest.fixture(scope="module")
def smoke_operations(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InterruptedThenResumed]:
    root = tmp_path_factory.mktemp("smoke-operations")
    state_dir = root / "state"
    out = root / "out"
    profile = smoke_operations_one_encryption_thread(root)
    with pytest.MonkeyPatch.context() as mp:
        # A private sandbox registry (conftest's state_dir, for the module's one run).
        mp.setenv("XDG_STATE_HOME", str(state_dir))
        child = subprocess.Popen(
            [sys.executable, "-m", "encbench", "run", str(profile), "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
        )
        results = out / "operations.jsonl"

        def kept() -> list[str]:
            return results.read_text().splitlines() if results.exists() else []

        # Four start-ups and one crash recovery kept: the next crash recovery (its write load,
        # its kill -9 or its recovery) is under way.
        deadline = time.monotonic() + 240
        while len(kept()) < 5 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.1)
        assert len(kept()) >= 5, child.stderr.read() if child.stderr else ""
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=120)
        yield InterruptedThenResumed(
            out=out,
            stopped_returncode=child.returncode,
            stopped_stderr=stderr,
            left_running=processes_owned_by(child.pid),
            sandbox_left=(out / "sandbox").exists(),
            registered_when_stopped=list(registry.entries()),
            kept=kept(),
            resumed=encbench("run", "--resume", str(out), env={"XDG_STATE_HOME": str(state_dir)}),
            registered_when_finished=list(registry.entries()),
        )


def test_the_smoke_operations_profile_times_every_operation_and_leaves_nothing(
    smoke_operations: InterruptedThenResumed,
) -> None:
    out = smoke_operations.out
    result = smoke_operations.resumed
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "operations.jsonl").read_text().splitlines()]
    by_cell: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for run in runs:
        by_cell.setdefault(run["cell"]["operation"] + str(run["cell"]["threads"]), []).append(run)
    assert set(by_cell) == {
        "startup0", "crash-recovery0", "encrypt-existing1", "key-rotation0", "backup0",
        "prepare0",
    }  # fmt: skip
    for name, cell_runs in by_cell.items():
        assert {r["variant"] for r in cell_runs} == {"plain", "encrypted"}
        assert all(r["time"] > 0 and r["timed_s"] > 0 for r in cell_runs)
        # the per-run proof: encrypted leaves every table encrypted, plain none (key
        # rotation: both sides every table)
        for r in cell_runs:
            both = name == "key-rotation0"
            want = r["tables"] if r["variant"] == "encrypted" or both else 0
            assert r["tables"] >= 3 and r["tables_encrypted"] == want
    # key rotation: the rotating run moved every table two key versions up, the other none
    for r in by_cell["key-rotation0"]:
        step = 2 if r["variant"] == "encrypted" else 0
        assert r["key_version"] == r["key_version_from"] + step >= 1
        assert r["tables_at_key_version"] == r["tables"]
        assert r["foreground_transactions"] > 0
        assert (r["encryption_s"] > 0 and r["encrypted_bytes"] > 0) == (step == 2)
    assert all(r["redo_bytes"] > 0 and r["pages_recovered"] > 0 for r in by_cell["crash-recovery0"])
    encrypting = [r for r in by_cell["encrypt-existing1"] if r["variant"] == "encrypted"]
    assert all(r["encryption_s"] > 0 and r["encrypted_bytes"] > 0 for r in encrypting)
    assert all(r["foreground_transactions"] > 0 for r in by_cell["encrypt-existing1"])
    assert all(r["backup_bytes"] > 0 for r in by_cell["backup0"] + by_cell["prepare0"])
    record = json.loads((out / "operations.json").read_text())
    assert record["proofs"]["encrypted"]["passed"] and record["proofs"]["plain"]["passed"]
    assert record["key_rotation"]["measured"] is True
    assert record["rotatable_options"]["encbench_key_management_filename"].startswith("<key")

    summary = json.loads((out / "summary.json").read_text())
    cells = summary["studies"]["operations"]["cells"]
    # Two rounds each (none measured again for other load: see the profile above).
    assert len(cells) == 6
    assert all(c["rounds"] + c["rounds_rejected"] >= 2 for c in cells)
    report = (out / "report.md").read_text()
    assert "| Operation | no encryption (95% CI) | encrypted (95% CI) | cost (95% CI) |" in report
    assert "| crash recovery |" in report and "redo applied" in report
    assert "| key rotation | not rotating: " in report and "while rotating" in report
    assert "**Key rotation**: not measured" not in report
    page = (out / "report.html").read_text()  # a plot of each operation's time
    assert 'aria-label="each operation&#x27;s time, plain against encrypted"' in page
    # nothing left behind: servers, sandboxes (backups included), keys
    assert not (out / "sandbox").exists()
    assert smoke_operations.registered_when_finished == []
    assert not (out / "private").exists()


def test_an_interrupt_during_a_crash_recovery_leaves_nothing_and_resume_finishes(
    smoke_operations: InterruptedThenResumed,
) -> None:
    run = smoke_operations
    assert run.stopped_returncode == 130, run.stopped_stderr
    assert "Traceback" not in run.stopped_stderr
    assert run.left_running == []
    assert not run.sandbox_left
    assert run.registered_when_stopped == []
    before = run.kept

    assert run.resumed.returncode == 0, run.resumed.stderr
    after = (run.out / "operations.jsonl").read_text().splitlines()
    assert after[: len(before)] == before  # no kept run measured again or changed
    assert len(after) >= 6 * 2 * 2  # every cell's 2 rounds, both variants
    assert run.registered_when_finished == []
