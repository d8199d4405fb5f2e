"""A tiny real A/A calibration at rest, through the CLI: both servers proven plain with
identical options, the calibration's report and result written, the machine's calibration
file made — and the next ordinary run's report states that noise floor."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from encbench.servers import registry
from tests.helpers import encbench, tiny_profile


def calibrate_tiny_one_cell(directory: Path) -> Path:
    """calibrate-tiny with one cell (2 threads) of its two: 12 rounds in 6 blocks are the
    fewest with an interval, so the cell cannot be shorter, but a second cell goes through
    the same steps again (a restart serves its first block as it serves every later block
    of the first: pair.renew).  The false-positive rate over many cells and the built-in
    profile's two cells are unit tests (tests/report/test_calibration.py)."""
    tiny = (files("encbench.profiles.builtin") / "calibrate-tiny.toml").read_text()
    assert "\nthreads = [1, 2]\n" in tiny
    profile = directory / "calibrate-tiny-1.toml"
    # The test runs beside another worker's servers: rounds measured again for that load, or
    # slowed by it, must not end the cell before its 12 rounds (this test is about the
    # calibration's mechanics; interference has its own tests).
    profile.write_text(
        tiny.replace('"calibrate-tiny"', '"calibrate-tiny-1"')
        .replace("\nthreads = [1, 2]\n", "\nthreads = [2]\ninterference_max_pct = 100\n")
        .replace("\ncell_budget_s = 90\n", "\ncell_budget_s = 600\n")
    )
    return profile


def test_a_tiny_calibration_proves_both_servers_plain_and_reports(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "aa"
    env = {"XDG_STATE_HOME": str(state_dir)}
    result = encbench(
        "calibrate", str(calibrate_tiny_one_cell(tmp_path)), "--out", str(out), env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out.absolute() / "report.md")

    record = json.loads((out / "at-rest.json").read_text())
    assert record["calibration"] is True
    assert record["sides"] == {"plain": "A (plain)", "encrypted": "B (plain twin)"}
    assert record["option_difference"] == {}
    for side in ("plain", "encrypted"):
        proof = record["proofs"][side]
        assert proof["variant"] == "plain" and proof["passed"]
        assert proof["tablespaces_encrypted"] == 0
        assert "encbench_proof.ibd" in proof["marker_found_in"]
    options = record["regimes"]["in-memory"]["options"]
    per_sandbox = {"datadir", "tmpdir", "socket", "pid-file", "log-error", "port"}
    same = [{k: v for k, v in options[s].items() if k not in per_sandbox} for s in options]
    assert same[0] == same[1] and not any("encrypt" in k for k in same[0])
    assert json.loads((out / "meta.json").read_text())["calibration"] is True
    # Fresh servers before every block (measure.restart): 6 blocks, the first block served
    # by the regime's own start, each later one by a restart, proven again each time.
    assert record["restart"] == "block"
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    firsts = [r for r in runs if r["setup_s"] > 0]  # (a re-measured first round: one more)
    assert len(firsts) >= 6 and all(r["position"] == 0 for r in firsts)
    assert record["regimes"]["in-memory"]["starts"] == len(firsts)

    summary = json.loads((out / "summary.json").read_text())
    calibration = summary["calibration"]
    assert calibration["cells_tested"] == 1 and len(calibration["cells"]) == 1
    assert all(c["rounds"] == 12 and c["round_spread_pct"] > 0 for c in calibration["cells"])
    low, high = calibration["false_positive_ci"]
    assert 0 <= low <= calibration["false_positive_rate"] <= high <= 1
    report = (out / "report.md").read_text()
    assert "A (plain)" in report and "B (plain twin)" in report
    assert "False-positive rate:" in report
    assert "encrypted" not in report.lower() and "overhead" not in report.lower()

    machine = json.loads((state_dir / "encbench" / "calibration.json").read_text())
    assert machine["calibration"] == json.loads((out / "calibration.json").read_text())
    assert not (out / "sandbox").exists() and registry.entries() == []

    # The next ordinary run states this machine's noise floor.
    prof = tiny_profile(tmp_path / "tiny.toml", warmup_s=0)
    run = encbench("run", str(prof), "--out", str(tmp_path / "run"), env=env)
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "run" / "report.md").read_text()
    assert "The latest A/A calibration of this machine (profile `calibrate-tiny-1`" in text
    noise = json.loads((tmp_path / "run" / "summary.json").read_text())["noise_floor"]
    assert noise["latest"]["cells_tested"] == 1
