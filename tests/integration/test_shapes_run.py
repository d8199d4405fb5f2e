"""Instance shapes on real servers (issue #11, item 2): the shapes-tiny profile runs through
the CLI with both servers confined — the cpuset, the CFS quota and the memory limit read back
from the cgroup files, the server's Cpus_allowed_list per run — and leaves no cgroup behind,
after a normal end and, through `encbench clean`, after a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from encbench.machine import placement
from encbench.servers import cgroup, shapes
from tests.helpers import encbench

NEEDED = {"cpuset", "cpu", "memory"}


@pytest.fixture(autouse=True)
def shapes_possible() -> None:
    why = shapes.problem(NEEDED)
    if why is not None:
        pytest.skip(why)  # not root, or no such controllers: the run would be refused


def of_run(dirs: set[Path], pid: int) -> set[Path]:
    """The groups of the run whose encbench process is `pid` (each group is named after it):
    another test worker's shaped run (the bound-by test's) may hold groups of its own."""
    return {p for p in dirs if p.name.startswith(f"{cgroup.GROUP_PREFIX}{pid}-")}


def shaped_dirs() -> set[Path]:
    """Every directory only a shaped server has (one per v1 controller beside cpuacct, or
    the v2 group), below encbench's own groups."""
    layout = shapes.detect(NEEDED)
    assert isinstance(layout, shapes.Layout)
    found = set()
    for controller, h in layout.hierarchies.items():
        if controller != shapes.V1_COUNTER:
            found |= set(h.parent.glob(f"{cgroup.GROUP_PREFIX}*"))
    suffixes = ("-cpuset", "-cpu", "-memory")
    return {p for p in found if layout.version == 2 or p.name.endswith(suffixes)}


def test_the_shapes_smoke_profile_runs_confined_and_leaves_no_cgroup(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    result = encbench("run", "shapes-tiny", "--out", str(out))
    assert result.returncode == 0, result.stderr

    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    allowed = {(r["cell"]["shape"], r["shape_cpus_allowed"]) for r in runs}
    both = placement.cpu_list(placement.usable_cpus()[:2])
    first = str(placement.usable_cpus()[0])
    assert {placement.cpu_list(shapes.parse_cpu_list(a)) for s, a in allowed if s == "2cpu"} == {
        both
    }
    assert {a for s, a in allowed if s == "half-cpu"} == {first}

    record = json.loads((out / "at-rest.json").read_text())
    half = record["shapes"]["half-cpu"]["regimes"]["io-bound"]["confinement"]
    for variant in ("plain", "encrypted"):
        shown = half[variant]
        assert shown["cpus_allowed_list"] == first
        read = shown["read_back"]
        if "cpu.max" in read:  # cgroup v2
            assert read["cpu.max"] == "50000 100000"
            assert read["memory.max"] == str(512 << 20)
        else:
            assert read["cpuset.cpus"] == first
            assert read["cpu.cfs_quota_us"] == "50000"
            assert read["memory.limit_in_bytes"] == str(512 << 20)
        assert any(g.startswith("cpuset:") or g.startswith("cgroup2:") for g in shown["cgroups"])
    report = (out / "report.md").read_text()
    assert "## CPU per shape" in report and "Confined, plain: read back" in report

    # The run's process id ends each session's name (engine/runner.new_session).
    pid = int(runs[0]["session"].rsplit("-", 1)[1])
    assert of_run(shaped_dirs(), pid) == set()
    assert list((state_dir / "encbench" / "cgroups").glob("*.json")) == []


def test_clean_removes_the_shaped_groups_of_a_killed_run(tmp_path: Path, state_dir: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", "shapes-tiny", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 180
        while not of_run(shaped_dirs(), child.pid) and time.monotonic() < deadline:
            assert child.poll() is None, "the run ended before a shaped server started"
            time.sleep(0.2)
        left = of_run(shaped_dirs(), child.pid)
        assert left, "no shaped group appeared"
    finally:
        child.send_signal(signal.SIGKILL)  # the run this test started, by its pid
        child.wait(timeout=30)
    cleaned = encbench("clean", env={"XDG_STATE_HOME": str(state_dir)})
    assert cleaned.returncode == 0, cleaned.stderr
    assert not any(p.exists() for p in left), cleaned.stdout
    removed = [line for line in cleaned.stdout.splitlines() if line.startswith("removed cgroup")]
    assert {Path(line.split()[-1]) for line in removed} >= left
