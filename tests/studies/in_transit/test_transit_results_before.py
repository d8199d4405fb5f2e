"""Results written by the PostgreSQL in-transit study before it was a part of the in-transit
study (tests/golden/pg-in-transit) still open: `encbench report` renders them again from
their runs, and `encbench compare` reads their summary.json as it was written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers import GOLDEN_ROOT, encbench_here

GOLDEN = GOLDEN_ROOT / "pg-in-transit"


def copied(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(GOLDEN, out)
    return out


def test_report_renders_a_results_directory_written_before(tmp_path: Path) -> None:
    out = copied(tmp_path, "before")
    done = encbench_here("report", str(out))
    assert done.returncode == 0, done.stderr
    report = (out / "report.md").read_text()
    assert "PostgreSQL" in report and "connect_select1" in report.replace("`", "")
    summary = json.loads((out / "summary.json").read_text())
    written = json.loads((GOLDEN / "summary.json").read_text())
    assert len(cells_of(summary)) == len(cells_of(written)) == 8


def test_compare_reads_a_summary_written_before(tmp_path: Path) -> None:
    a, b = copied(tmp_path, "a"), copied(tmp_path, "b")
    done = encbench_here("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    compared = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "PostgreSQL" in compared


def test_compare_matches_the_cells_written_before_with_those_written_now(tmp_path: Path) -> None:
    before, now = copied(tmp_path, "before"), copied(tmp_path, "now")
    assert (
        encbench_here("report", str(now)).returncode == 0
    )  # its summary as this encbench writes it
    done = encbench_here("compare", str(before), str(now), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    compared = (tmp_path / "cmp" / "comparison.md").read_text()
    assert compared.count("PostgreSQL transactions per second lost to TLS") == 3
    # Every cell matched, and no table of the MariaDB rows' metric.
    assert "only in" not in compared and "Rate lost to encryption" not in compared


def cells_of(summary: dict[str, object]) -> list[object]:
    """The PostgreSQL in-transit cells of a summary: its part pg-in-transit, then and now."""
    parts = summary["studies"]
    assert isinstance(parts, dict)
    return list(parts["pg-in-transit"]["cells"])
