"""PostgreSQL at rest with real servers (root, loop devices, ext4 encryption, memory
cgroups): the pg-at-rest-tiny profile runs through the CLI — both servers proven below the
filesystem (the marker in plain's raw image and not in fs's, the names listed without the
key), every run on its image and in its memory group — and leaves no mount, loop device, key,
postgres process or cgroup behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from encbench import state
from encbench.estimate import units as estimate_units
from encbench.servers import cgroup, fscrypt, postgresql, registry, shapes
from encbench.studies.at_rest import postgresql_needs as needs
from tests.helpers import (
    encbench,
    loops_under,
    mounts_under,
    processes_owned_by,
    run_cli,
    skip_unless_ci,
)

PROFILE = "pg-at-rest-tiny"


@pytest.fixture(autouse=True)
def at_rest_possible() -> None:
    if postgresql.bindir() is None:
        skip_unless_ci("PostgreSQL is not installed: run scripts/setup-test-extras.sh")
    why = fscrypt.unavailable() or shapes.problem(needs.CONTROLLERS)
    if why is not None:
        pytest.skip(why)  # not root, no ext4 encryption or no cgroups: the study is left out


def processes_naming(path: Path) -> list[str]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(path) in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{process.pid} {cmdline}")
    return found


def groups_of(pid: int) -> list[Path]:
    """The cgroup directories of the run whose encbench process is `pid`."""
    layout = shapes.detect(needs.CONTROLLERS)
    assert isinstance(layout, shapes.Layout)
    return [
        p
        for h in layout.hierarchies.values()
        for p in h.parent.glob(f"{cgroup.GROUP_PREFIX}{pid}-*")
    ]


def test_the_tiny_profile_proves_both_filesystems_measures_both_regimes_and_leaves_nothing(
    open_dir: Path, state_dir: Path
) -> None:
    out = open_dir / "out"
    result, pid = run_cli("run", PROFILE, "--out", str(out), state_dir=state_dir, timeout=900)
    assert result.returncode == 0, result.stderr

    # One results file, the at-rest study's, its cells naming their kind.
    assert not (out / "pg-at-rest.jsonl").exists()
    lines = (out / "at-rest.jsonl").read_text().splitlines()
    runs = [json.loads(line) for line in lines if line.strip()]
    assert {r["cell"]["kind"] for r in runs} == {"postgresql"}
    # 2 regimes × 2 workloads × 1 client count, 2 rounds × 2 sides.
    assert len(runs) == 4 * 2 * 2
    assert {(r["cell"]["regime"], r["cell"]["workload"]) for r in runs} == {
        (regime, workload)
        for regime in ("in-memory", "io-bound")
        for workload in ("tpcb_like", "select_only")
    }
    record = json.loads((out / "pg-at-rest.json").read_text())
    fs = record["filesystem"]
    plain, encrypted = fs["proofs"]["plain"], fs["proofs"]["encrypted"]
    assert plain["passed"] and plain["marker_found"] and not plain["encrypted"]
    assert encrypted["passed"] and encrypted["encrypted"] and not encrypted["marker_found"]
    assert encrypted["entries"] > 0 and encrypted["names_readable_without_key"] == []
    assert encrypted["example_without_key"] not in ("data", "postgresql.log", "initdb.log")
    assert fs["key"] == "removed"
    devices = {r["variant"]: r["device"] for r in runs}
    assert devices["plain"] != devices["encrypted"]
    for r in runs:
        assert r["device"].startswith("/dev/loop") and r["tps"] > 0
        cached = r["page_cache_mb"] * 2**20
        assert r["memory_limit_bytes"] > 0 and r["group_cache_bytes"] >= cached
        # A write run's window holds its CHECKPOINT; a read run's none.
        if r["cell"]["workload"] == "tpcb_like":
            assert 0 < r["checkpoint_s"] < r["wall_s"]
            # The server's own counters over the run (the estimate's PostgreSQL units): a
            # write run writes blocks and WAL.
            assert r["blocks_written"] > 0 and r["wal_bytes"] > 0, r
        else:
            assert "checkpoint_s" not in r
        assert r["blocks_read"] >= 0
        if r["cell"]["regime"] == "io-bound":
            assert cached < r["data_bytes"]
            assert r["blocks_read"] > 0, r  # the reads the units are per
            assert r["memory_limit_bytes"] < r["data_bytes"]
    # The estimate's PostgreSQL units come from these runs (their figures are noise at 1 s).
    given = estimate_units.from_directory(out)
    assert {"fs_block_read", "fs_block_written"} <= set(given.units), given.missing
    regimes = record["regimes"]
    assert regimes["in-memory"]["shared_buffers_mb"] > regimes["io-bound"]["shared_buffers_mb"]
    assert all(s["prewarmed_blocks"] > 0 for s in regimes["in-memory"]["servers"].values())

    report = (out / "report.md").read_text()
    assert "PostgreSQL at rest: what filesystem encryption (fscrypt) costs" in report
    contents = next(c for c in fs["ciphers"] if c["role"] == "contents")
    assert f"driver `{contents['driver']}`" in report and "AES-NI" in report

    assert processes_owned_by(pid) == []
    assert processes_naming(out) == []
    assert mounts_under(out) == [] and loops_under(out) == []
    assert not (out / "pg-volumes").exists() and not (out / "private").exists()
    assert state.base() == state_dir / "encbench"
    assert state.read_records("volumes", dict) == []
    assert list((state_dir / "encbench" / "cgroups").glob("*.json")) == []
    assert groups_of(pid) == []
    assert registry.entries() == []


def test_clean_undoes_a_run_killed_with_its_servers_in_their_groups_on_their_images(
    open_dir: Path, state_dir: Path
) -> None:
    out = open_dir / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", PROFILE, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:
        # Killed once a server runs in its memory group on an encrypted volume.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert child.poll() is None, "the run ended before its servers were in groups"
            keyed = any(r.get("key_identifier") for r in state.read_records("volumes", dict))
            if keyed and groups_of(child.pid):
                break
            time.sleep(0.2)
        else:
            pytest.fail("no server started in a memory group on an encrypted volume")
    finally:
        child.send_signal(signal.SIGKILL)  # the run this test started, by its pid
        child.wait(timeout=30)
    assert len(mounts_under(out)) == 2 and processes_naming(out)

    cleaned = encbench("clean", timeout=300)
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stdout.count("removed volume") == 2, cleaned.stdout
    assert processes_naming(out) == []
    assert mounts_under(out) == [] and loops_under(out) == []
    assert state.read_records("volumes", dict) == []
    assert list((state_dir / "encbench" / "cgroups").glob("*.json")) == []
    assert groups_of(child.pid) == []
    assert registry.entries() == []
