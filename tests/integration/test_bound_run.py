"""What bound a cell, on real servers in instance shapes: a cell confined to a quarter of a
CPU's time and driven by eight threads from memory is named CPU-bound, and a cell whose
shape caps its disk at 200 IOPS, read from disk, is named bound by its IOPS cap — in
summary.json's cell `bound` and in report.md's "What bound each cell" — though the disk
itself idles.

Two runs of one cell each: a profile's shapes and regimes are crossed, and the capped shape's
in-memory preload alone would read the whole table through the cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from encbench.servers import cgroup, shapes
from tests.helpers import encbench

# Both shapes' controllers: the quota's and the IOPS cap's (blkio on cgroup v1).
NEEDED = {"cpuset", "cpu", "io"}
# Far below what the server reads unthrottled here (some 10,000 a second at four threads),
# yet high enough that a shaped start's own reads (undo logs, the dictionary) take a moment.
IOPS = 200
MEASURE = """\
[measure]
workloads = ["oltp_point_select"]
regimes = ["{regime}"]
threads = [{threads}]
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
cell_budget_s = 30
interference_max_pct = 100
"""
# A quarter of a CPU: sysbench, unconfined, needs far less than the other CPU to fill it.
QUOTA = 0.25
# The machine's cores this busy (everything on it): other load may keep the server from its
# quota.  Alone here (2 cores) the cell kept them a fifth busy: 0.37 of 2.
CONTENDED = 0.8
CPU_BOUND = (
    'name = "bound-cpu"\ncipher_speed_repeats = 1\n[data]\ntables = 1\ntable_size = 2000\n'
    + f'[[server.shapes]]\nname = "quarter-cpu"\ncpus = 1\ncpu_quota = {QUOTA}\n'
    + MEASURE.format(regime="in-memory", threads=8)
)
# 50,000 rows (about 11 MB) against the io-bound regime's smallest pool (8 MB): about a
# third of the point selects read a page from disk.
IOPS_BOUND = (
    'name = "bound-iops"\ncipher_speed_repeats = 1\n[data]\ntables = 1\ntable_size = 50000\n'
    + f'[[server.shapes]]\nname = "iops{IOPS}"\ncpus = 2\niops = {IOPS}\n'
    + MEASURE.format(regime="io-bound", threads=4)
)


@pytest.fixture(autouse=True)
def shapes_possible(tmp_path: Path) -> None:
    why = shapes.problem(NEEDED)
    if why is not None:
        pytest.skip(why)  # not root, or no such controllers: the run would be refused
    if shapes.disk_of(tmp_path) is None:
        pytest.skip("the test's directory is on no block device: an IOPS cap needs one")


def run(tmp_path: Path, name: str, toml: str) -> tuple[dict[str, Any], str, Path]:
    """The profile run through the CLI: its one at-rest cell, its report and its folder."""
    prof = tmp_path / f"{name}.toml"
    prof.write_text(toml)
    out = tmp_path / name
    result = encbench("run", str(prof), "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    (cell,) = summary["studies"]["at-rest"]["cells"]
    return cell, (out / "report.md").read_text(), out


def bound_rows(report: str) -> list[str]:
    """The rows of report.md's "What bound each cell" table (below its header)."""
    _, _, section = report.partition("## What bound each cell")
    assert section, "report.md has no 'What bound each cell' section"
    table = section.split("\n## ", 1)[0].partition("\n|---")[2]
    return [line for line in table.splitlines()[1:] if line.startswith("| ")]


def io_groups() -> set[Path]:
    """encbench's groups where an IOPS cap is written (v1's blkio hierarchy, or cgroup2)."""
    layout = shapes.detect(NEEDED)
    assert isinstance(layout, shapes.Layout)
    key = shapes.UNIFIED if layout.version == 2 else shapes.v1_name(shapes.IO)
    return set(layout.hierarchies[key].parent.glob(f"{cgroup.GROUP_PREFIX}*"))


def test_a_cell_in_a_quarter_cpu_is_cpu_bound_and_one_under_an_iops_cap_is_bound_by_it(
    tmp_path: Path, state_dir: Path
) -> None:
    before = io_groups()
    cpu_cell, cpu_report, _ = run(tmp_path, "cpu", CPU_BOUND)
    assert cpu_cell["shape"] == "quarter-cpu" and cpu_cell["regime"] == "in-memory"
    bound = cpu_cell["bound"]
    for variant in ("plain", "encrypted"):
        side = bound["variants"][variant]
        assert side["server_cores_allowed"] == QUOTA and side.get("iops_cap") is None
        # Held to its quarter whatever else ran (the kernel's accounting slack aside).
        assert side["server_cores"] <= 1.2 * QUOTA, bound["words"]
        # And named CPU-bound, unless the machine was so busy with other processes (the
        # other test workers) that the server could not get its quarter: then neither the
        # quota nor the cores may reach 90%, and "none" is the rule's answer, not a fault.
        if side["cores_busy"] < CONTENDED * side["cores"]:
            assert "CPU" in side["kinds"], bound["words"]
    (row,) = bound_rows(cpu_report)
    assert row.startswith("| 8 | ") and bound["words"] in row, row
    if all("CPU" in v["kinds"] for v in bound["variants"].values()):
        assert row.startswith("| 8 | CPU"), row

    iops_cell, iops_report, out = run(tmp_path, "iops", IOPS_BOUND)
    assert iops_cell["shape"] == f"iops{IOPS}" and iops_cell["regime"] == "io-bound"
    bound = iops_cell["bound"]
    for variant in ("plain", "encrypted"):
        side = bound["variants"][variant]
        assert side["iops_cap"] == IOPS
        # Never above the cap, but for the kernel's slack.
        assert side["server_read_iops"] <= 1.5 * IOPS, bound["words"]
        # And filled to it, named the bound (other load may fill the cores too), unless the
        # machine's cores were so busy that the server could not keep its reads coming (a
        # CI run's other workers: 87% of the cap, the cores 94% busy).
        if side["cores_busy"] < CONTENDED * side["cores"]:
            assert "IOPS cap" in side["kinds"], bound["words"]
            assert side["server_read_iops"] >= 0.9 * IOPS, bound["words"]
    (row,) = bound_rows(iops_report)
    assert row.startswith("| 4 | ") and bound["words"] in row, row
    assert f"IOPS cap {IOPS}: the server's reads" in row
    if all("IOPS cap" in v["kinds"] for v in bound["variants"].values()):
        assert "IOPS cap — " in row, row

    # The cap as the kernel held it, on the disk of each server's data directory.
    record = json.loads((out / "at-rest.json").read_text())
    confined = record["shapes"][f"iops{IOPS}"]["regimes"]["io-bound"]["confinement"]
    disk = shapes.disk_of(out)
    assert disk is not None
    for variant in ("plain", "encrypted"):
        read = confined[variant]["read_back"]
        if "io.max" in read:  # cgroup v2
            assert f"riops={IOPS} wiops={IOPS}" in read["io.max"]
        else:
            assert read["blkio.throttle.read_iops_device"] == f"{disk.numbers} {IOPS}"
            assert read["blkio.throttle.write_iops_device"] == f"{disk.numbers} {IOPS}"
        assert confined[variant]["iops_device"] == f"{disk.name} ({disk.numbers})"
    assert f"{disk.numbers} {IOPS}" in iops_report or f"riops={IOPS}" in iops_report
    assert io_groups() == before
