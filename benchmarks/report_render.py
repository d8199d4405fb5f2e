"""Benchmark (not a test): how long `encbench report DIR` takes for a results directory of
1000 runs per study (at rest and in transit), as a user runs it (a fresh process: imports
included).  The goal is < 5 s.

    .venv/bin/python -m benchmarks.report_render [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from encbench.profiles import profile
from encbench.results.store import ResultStore
from encbench.studies.at_rest.cells import cells as at_rest_cells
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.in_transit.cells import cells as transit_cells
from encbench.studies.in_transit.records import TransitRecord
from tests.report.test_html_report import synthetic_runs
from tests.studies.in_transit.test_transit_plan_and_report import record

PROFILE = """name = "big"
studies = ["at-rest", "in-transit"]
[transit]
tests = ["connect", "oltp_point_select", "bulk"]
key_types = ["rsa1024", "rsa4096"]
methods = ["tls", "ssh"]
ssh_ciphers = ["aes256-cbc"]
connect_threads = [1]
query_threads = [1, 8]
rtt_ms = [0, 40]
max_rounds = 1000
[measure]
workloads = ["oltp_read_only", "oltp_point_select"]
regimes = ["in-memory", "io-bound"]
threads = [1, 4, 16, 64]
max_rounds = 1000
"""
GOLDEN = Path(__file__).parent.parent / "tests" / "golden" / "report"


def make_results(directory: Path) -> None:
    prof = profile.parse(PROFILE, "big.toml")
    cells = at_rest_cells(prof)
    # 16 cells × 31 or 32 rounds × 2 variants = 1000 runs
    effects = {c: (32 if i < 4 else 31, 0.05 * (i % 3), 0.03) for i, c in enumerate(cells)}
    store = ResultStore.create(directory, prof.name, PROFILE)
    for run in synthetic_runs(effects):
        store.append(run)
    transit = transit_cells(prof)
    # 500 rounds of 2 runs, spread over the cells
    per_cell, extra = divmod(500, len(transit))
    for i, cell in enumerate(transit):
        for n in range(per_cell + (1 if i < extra else 0)):
            store.append(record(cell, n, "plain", 3000.0 * (1 + 0.01 * (n % 7))))
            store.append(record(cell, n, "encrypted", 300.0 * (1 + 0.01 * (n % 5))))
    for name in ("at-rest.json", "environment.json", "crypto.json"):
        shutil.copy(GOLDEN / name, directory / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "r"
        make_results(results)
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "encbench", "report", str(results)],
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - started)
        store = ResultStore.open(results)
        runs = f"{len(store.runs(RunRecord))} at-rest and {len(store.runs(TransitRecord))}"
    print(
        f"encbench report, {runs} in-transit runs: mean {statistics.mean(times):.2f} s, "
        f"stdev {statistics.stdev(times):.2f} s, min {min(times):.2f} s, "
        f"max {max(times):.2f} s over {args.repeat} runs"
    )


if __name__ == "__main__":
    main()
