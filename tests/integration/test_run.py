"""End to end through the CLI, as a user runs it: a short paired run (during which a second
run on its directory is refused and `encbench clean` spares it), an interrupted run that
leaves nothing behind and resumes, and `encbench clean` after a run was killed outright."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from encbench.machine import placement
from encbench.servers import cgroup, registry
from tests.helpers import (
    encbench,
    encbench_here,
    processes_owned_by,
    server_of_a_killed_run,
    tiny_profile,
)


def runs_of(out: Path) -> list[dict]:  # type: ignore[type-arg]
    path = out / "at-rest.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class ShortRun:
    out: Path
    pid: int
    result: subprocess.CompletedProcess[str]  # the run's exit, stdout and stderr
    # Tried once the run had kept a run of its own, while it went on:
    runs_kept_then: int
    second: subprocess.CompletedProcess[str]  # `encbench run --resume` of its directory
    cleaned: subprocess.CompletedProcess[str]  # `encbench clean`
    its_servers_after_clean: list[str]  # its mariadbd still running after that clean


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShortRun]:
    """One short paired run through the CLI (2 cells × 2 rounds) for two tests: what it
    writes, and, tried while it runs, a second run on its directory and `encbench clean`."""
    root = tmp_path_factory.mktemp("short-run")
    state_dir = root / "state"
    env = {"XDG_STATE_HOME": str(state_dir)}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(state_dir))  # a private registry, as conftest's
        prof = tiny_profile(root / "tiny.toml", threads="[1, 2]", warmup_s=1)
        out = root / "out"
        child = subprocess.Popen(
            [sys.executable, "-m", "encbench", "run", str(prof), "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        try:
            deadline = time.monotonic() + 180
            while not runs_of(out) and time.monotonic() < deadline and child.poll() is None:
                time.sleep(0.2)
            kept = len(runs_of(out))
            # Held still (its servers running) while a second run and clean are tried: on a
            # busy machine the 2 × 2 run could otherwise end, and its servers with it,
            # before they are looked for.  Still live to both: its pid holds the lock.
            child.send_signal(signal.SIGSTOP)
            try:
                second = encbench("run", "--resume", str(out), env=env)
                cleaned = encbench("clean", env=env)
                servers = [p for p in processes_owned_by(child.pid) if "mariadbd" in p]
            finally:
                child.send_signal(signal.SIGCONT)
        finally:
            stdout, stderr = child.communicate(timeout=300)
        result = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
        yield ShortRun(out, child.pid, result, kept, second, cleaned, servers)


def test_a_short_paired_run_writes_runs_summary_and_report(short_run: ShortRun) -> None:
    out = short_run.out
    result = short_run.result
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out.absolute() / "report.md")

    runs = runs_of(out)
    assert len(runs) == 2 * 2 * 2  # 2 cells × 2 rounds × 2 variants
    # A block: round 0 in the order drawn, round 1 in the other.
    first, second = runs[:2], runs[2:4]
    assert [r["position"] for r in runs[:4]] == [0, 1, 0, 1]
    assert [r["variant"] for r in second] == [r["variant"] for r in reversed(first)]
    assert all(r["tps"] > 0 and r["cpu_ms_per_txn"] > 0 for r in runs)
    summary = json.loads((out / "summary.json").read_text())
    at_rest = summary["studies"]["at-rest"]
    assert [c["rounds"] for c in at_rest["cells"]] == [2, 2]
    assert all(c["comparisons"]["tps"]["verdict"] for c in at_rest["cells"])
    assert at_rest["servers"]["proofs"]["encrypted"]["passed"]
    assert summary["harness"]["share_of_machine_pct"] < 5
    meta = json.loads((out / "meta.json").read_text())
    assert meta["files"]["at-rest.jsonl"] == {"schema": 1}

    report = (out / "report.md").read_text()
    assert "| Threads | encrypted TPS | no encryption TPS | overhead (95% CI) |" in report
    assert "`innodb_encrypt_tables=ON`" in report
    # Two rounds give no interval: no verdict, never "no difference detected".
    rows = [line for line in report.splitlines() if line.startswith(("| 1 |", "| 2 |"))]
    assert sum("no verdict: 2 rounds, an interval needs 12" in line for line in rows) >= 2
    assert not any("no difference" in line for line in rows)
    assert "no verdict at 1 and 2 threads (2 rounds each; an interval needs 12)" in report
    assert report.index("## Reading this report") < report.index("## Summary")
    assert "seed" not in report.lower()
    # nothing left behind: the run is finished, so its keys are gone too
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert not (out / "private").exists()
    assert not (out / ".lock").exists()

    # the report re-renders from the results alone, identically
    before = (out / "report.md").read_text()
    again = encbench_here("report", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "report.md").read_text() == before


def test_a_live_directory_is_refused_to_a_second_run_and_clean_spares_the_live_run(
    short_run: ShortRun,
) -> None:
    assert short_run.runs_kept_then >= 1, short_run.result.stderr  # tried while it ran
    second = short_run.second
    assert second.returncode == 2
    assert second.stderr.count("\n") == 1
    assert f"in use by a live encbench run (pid {short_run.pid})" in second.stderr
    assert "encbench clean" not in second.stderr.replace("never run `encbench clean`", "")

    cleaned = short_run.cleaned
    assert cleaned.returncode == 0
    assert "stopped" not in cleaned.stdout
    assert short_run.its_servers_after_clean
    # and the live run went on to its end, every run measured
    assert short_run.result.returncode == 0, short_run.result.stderr
    assert len(runs_of(short_run.out)) == 2 * 2 * 2


def test_an_interrupted_run_leaves_nothing_running_keeps_its_runs_and_resumes(
    tmp_path: Path, state_dir: Path
) -> None:
    # SIGHUP (the terminal closed); SIGINT and SIGTERM go through the same handler
    # (tests/test_stop_signals.py) and stop real runs in the operations and transit tests.
    sig = signal.SIGHUP
    prof = tiny_profile(tmp_path / "tiny.toml", min_rounds=4, max_rounds=4)
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(prof), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )
    deadline = time.monotonic() + 180
    while len(runs_of(out)) < 3 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.2)
    assert len(runs_of(out)) >= 3, child.stderr.read() if child.stderr else ""
    assert processes_owned_by(child.pid), "a server and sysbench should be running"
    child.send_signal(sig)
    _, stderr = child.communicate(timeout=120)

    assert child.returncode == 130, stderr
    assert "stopped by" in stderr and "Traceback" not in stderr
    assert processes_owned_by(child.pid) == []
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    kept = runs_of(out)
    assert len(kept) >= 3
    # Kept for --resume, private, and in no document.
    key_file = out / "private" / "encryption.keys"
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    key = key_file.read_text().split(";")[1].strip()
    for name in ("report.md", "summary.json", "report.html"):
        assert key not in (out / name).read_text()

    result = encbench("run", "--resume", str(out), env={"XDG_STATE_HOME": str(state_dir)})
    assert result.returncode == 0, result.stderr
    after = runs_of(out)
    assert after[: len(kept)] == kept  # nothing measured was lost or rewritten
    summary = json.loads((out / "summary.json").read_text())
    assert summary["studies"]["at-rest"]["cells"][0]["rounds"] == 4
    assert len({r["session"] for r in after}) == 2


def test_clean_stops_the_server_of_a_run_that_was_killed(tmp_path: Path, state_dir: Path) -> None:
    # A run killed with SIGKILL cannot stop its servers: they outlive it in their own groups.
    root = tmp_path / "sandbox"
    server_pid = server_of_a_killed_run(root, state_dir)
    os.kill(server_pid, 0)  # the orphan is alive

    cleaned = encbench("clean", env={"XDG_STATE_HOME": str(state_dir)})
    assert cleaned.returncode == 0
    assert f"stopped plain (pid {server_pid})" in cleaned.stdout
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(server_pid, 0)
            time.sleep(0.1)
    assert not root.exists()
    assert "nothing to clean" in encbench("clean", env={"XDG_STATE_HOME": str(state_dir)}).stdout


def test_a_run_killed_outright_resumes_after_clean(tmp_path: Path, state_dir: Path) -> None:
    # Killed after its first round (2 runs), with a round left for the resumed run to measure.
    prof = tiny_profile(tmp_path / "tiny.toml", min_rounds=2, max_rounds=2)
    out = tmp_path / "out"
    env = {"XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(prof), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    deadline = time.monotonic() + 180
    while len(runs_of(out)) < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.2)
    child.kill()  # SIGKILL: no clean-up runs; its servers outlive it
    child.wait()
    orphans = [p for p in processes_owned_by(child.pid) if "mariadbd" in p]
    assert orphans, "the killed run's servers should still be running"

    refused = encbench("run", "--resume", str(out), env=env)
    # Refused once the resumed run has opened (and written to) its results directory: a
    # failure (1), not bad input refused before anything was created (2).
    assert refused.returncode == 1
    assert "run `encbench clean` first" in refused.stderr

    assert encbench("clean", env=env).returncode == 0
    for _ in range(100):
        if not processes_owned_by(child.pid):
            break
        time.sleep(0.1)
    assert processes_owned_by(child.pid) == []
    resumed = encbench("run", "--resume", str(out), env=env)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["studies"]["at-rest"]["cells"][0]["rounds"] == 2


def test_each_run_is_proven_and_its_cpu_counted_over_the_loop_and_its_flush(
    tmp_path: Path, state_dir: Path
) -> None:
    # ~15 MB of rows against the smallest pool: the io-bound runs read pages from disk.
    prof = tiny_profile(
        tmp_path / "io.toml",
        workloads='["oltp_read_write"]',
        regimes='["io-bound"]',
        warmup_s=1,
    )
    prof.write_text(prof.read_text().replace("table_size = 2000", "table_size = 60000"))
    out = tmp_path / "out"
    result = encbench("run", str(prof), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)})
    assert result.returncode == 0, result.stderr

    runs = runs_of(out)
    assert len(runs) == 4
    source = cgroup.SOURCE_PROC if cgroup.detect() is None else runs[0]["cpu_source"]
    assert source in (cgroup.SOURCE_V1, cgroup.SOURCE_V2, cgroup.SOURCE_PROC)
    for r in runs:
        assert r["cpu_source"] == source
        assert r["cpu_window"] == "event loop + flush"
        assert r["dirty_pages_left"] == 0
        assert r["cpu_window_s"] > 0 and r["flush_wait_s"] >= 0
        assert r["server_cpu_s"] > 0
    plain = [r for r in runs if r["variant"] == "plain"]
    encrypted = [r for r in runs if r["variant"] == "encrypted"]
    assert all(r["pages_decrypted"] == r["pages_encrypted"] == 0 for r in plain)
    assert all(r["pages_read"] > 0 and r["pages_decrypted"] > 0 for r in encrypted)
    assert all(r["pages_encrypted"] > 0 for r in encrypted)

    servers = json.loads((out / "at-rest.json").read_text())
    regime = servers["regimes"]["io-bound"]
    assert regime["proofs"]["encrypted"]["tablespaces_encrypted"] == 2  # sbtest1 + proof table
    assert regime["proofs"]["plain"]["tablespaces_encrypted"] == 0
    assert regime["cpu_source"] == {"plain": source, "encrypted": source}
    report = (out / "report.md").read_text()
    assert "Server CPU per transaction: counted over sysbench's event loop only" in report
    assert "Proven again after the restart" in report
    # every group went with its server
    assert not list((state_dir / "encbench" / "cgroups").glob("*.json"))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs 2 CPUs")
@pytest.mark.parametrize("sharing", ["pinned", "duet"])
def test_pinned_and_duet_rounds_record_where_each_run_ran(
    tmp_path: Path, state_dir: Path, sharing: str
) -> None:
    prof = tiny_profile(tmp_path / "tiny.toml", sharing=f'"{sharing}"')
    out = tmp_path / "out"
    result = encbench("run", str(prof), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)})
    assert result.returncode == 0, result.stderr
    runs = runs_of(out)
    assert len(runs) == 4
    first, second = placement.halves(placement.usable_cpus())
    halves = [placement.cpu_list(first), placement.cpu_list(second)]
    assert {r["sharing"] for r in runs} == {sharing}
    if sharing == "pinned":
        assert {(r["server_cpus"], r["client_cpus"]) for r in runs} == {tuple(halves)}
    else:
        for number in (0, 1):
            pair = [r for r in runs if r["round"] == number]
            # one window of the machine's clocks for both runs of a duet round
            assert pair[0]["wall_s"] == pair[1]["wall_s"]
            # each side's server and client on the half its position names
            assert sorted((r["position"], r["server_cpus"], r["client_cpus"]) for r in pair) == [
                (0, halves[0], halves[0]),
                (1, halves[1], halves[1]),
            ]
        # each variant had each half once in the block
        assert {(r["variant"], r["position"]) for r in runs} == {
            (v, p) for v in ("plain", "encrypted") for p in (0, 1)
        }
    report = (out / "report.md").read_text()
    assert sharing in report
    assert registry.entries() == []
