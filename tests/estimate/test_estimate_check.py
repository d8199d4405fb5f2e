"""The estimate's model held to ±25% on the io-bound read cells of a measured `quick` run:
each cell's extra CPU estimated from its plain run's counters with the per-page cost of the
*other* io-bound cells (encbench/estimate/validate.py), against what it measured.

A measured run is not part of the repository; give its results directory:

    ENCBENCH_ESTIMATE_RUN=DIR .venv/bin/pytest tests/estimate/test_estimate_check.py

(`DIR` from `encbench run quick --out DIR`; docs/estimate.md).  Without it the test is
skipped with that reason; a directory copied to tests/golden/estimate-quick/ (its
profile.toml, meta.json, at-rest.jsonl, at-rest.json and crypto.json) is used instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from encbench.estimate import validate
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "estimate-quick"
ENV = "ENCBENCH_ESTIMATE_RUN"


def measured_run() -> Path:
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    if (GOLDEN / "at-rest.jsonl").exists():
        return GOLDEN
    pytest.skip(f"no measured quick run: {ENV}=DIR (from `encbench run quick --out DIR`)")


def test_the_model_holds_within_25_percent_on_the_io_bound_read_cells_of_quick() -> None:
    checked = validate.validate(measured_run())
    reads = [c for c in checked.cells if c.kind == validate.IO_BOUND_READ]
    assert len(reads) >= 2, "quick measures io-bound read cells at several thread counts"
    assert validate.outside(checked, validate.IO_BOUND_READ, 25.0) == []
