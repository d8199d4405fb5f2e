"""`encbench estimate --measure-units`: a run of a (here tiny) units profile on sandboxed
servers, whose unit costs are then kept in this machine's state for later estimates."""

from __future__ import annotations

import json
from pathlib import Path

from encbench.estimate import units
from tests.helpers import encbench

TINY_UNITS = """name = "tiny-units"
studies = ["at-rest", "in-transit"]
cipher_speed_repeats = 1
[data]
tables = 1
table_size = 50000
[measure]
workloads = ["oltp_read_only", "oltp_write_only"]
regimes = ["io-bound"]
threads = [2]
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
cell_budget_s = 60
interference_max_pct = 100
restart = "regime"
[transit]
tests = ["connect", "bulk"]
connect_threads = [1]
table_size = 1000
bulk_mb = 4
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
cell_budget_s = 30
interference_max_pct = 100
"""


def test_measure_units_runs_the_units_profile_and_keeps_what_it_measured(
    tmp_path: Path, state_dir: Path
) -> None:
    profile = tmp_path / "tiny-units.toml"
    profile.write_text(TINY_UNITS)
    result = encbench("estimate", "--measure-units", "--units-profile", str(profile), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # stdout is the units table alone: the run's own lines went to stderr.
    assert result.stdout.startswith("# Unit costs of encryption on this machine")
    assert "report.md" in result.stderr
    runs = list((tmp_path / "results").glob("tiny-units-*"))
    assert len(runs) == 1 and (runs[0] / "at-rest.jsonl").exists()
    stored = json.loads((state_dir / "encbench" / units.MACHINE_FILE).read_text())["units"]
    for name in ("page_read", "page_written", "handshake", "tls_mib", "log_mib"):
        assert name in stored, (name, result.stdout)
        assert stored[name]["source"] == str(runs[0].resolve())
    assert stored["handshake"]["us"] > 0 and stored["page_read"]["rounds"] == 2
