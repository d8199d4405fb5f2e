"""A tiny real run with `[measure] profile_cpu = true`: perf samples both real servers in one
extra paired run per cell and the report gains the section "where the extra CPU goes"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from encbench.profiling import PROFILE_FILE, perf
from encbench.servers import registry
from tests.helpers import encbench, tiny_profile


def test_a_run_with_the_cpu_profile_reports_where_the_cost_goes(
    tmp_path: Path, state_dir: Path
) -> None:
    why = perf.why_it_cannot_sample(tmp_path)
    if why is not None:
        pytest.skip(f"perf cannot sample here: {why}")
    prof = tiny_profile(tmp_path / "tiny.toml", profile_cpu="true", profile_cpu_s=1)
    out = tmp_path / "out"
    result = encbench("run", str(prof), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)})
    assert result.returncode == 0, result.stderr

    data = json.loads((out / PROFILE_FILE).read_text())
    assert data["unavailable"] is None
    assert data["calibration"]["core_ranges"], "openssl speed's cipher core was not found"
    (cell,) = data["cells"].values()
    assert cell["error"] is None
    for variant in ("plain", "encrypted"):
        run = cell["variants"][variant]
        assert run["transactions"] > 0 and run["samples"] > 0
        assert (out / run["report"]).read_text().startswith("#")
    assert cell["variants"]["plain"]["pages_decrypted"] == 0
    report = (out / "report.md").read_text()
    assert "Where the extra server CPU goes, by function group" in report
    # perf's binary files are not kept; no server is left registered.
    assert not list((out / "profiles").glob("*.data"))
    assert registry.entries() == []
