"""Results written by the PostgreSQL in-transit study before it was a kind of the in-transit
study (tests/golden/pg-in-transit) still open: `encbench report` renders them again from
their runs, and `encbench compare` reads their summary.json as it was written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers import encbench

GOLDEN = Path(__file__).resolve().parent / "golden" / "pg-in-transit"


def copied(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(GOLDEN, out)
    return out


def test_report_renders_a_results_directory_written_before(tmp_path: Path) -> None:
    out = copied(tmp_path, "before")
    done = encbench("report", str(out))
    assert done.returncode == 0, done.stderr
    report = (out / "report.md").read_text()
    assert "PostgreSQL" in report and "connect_select1" in report.replace("`", "")
    summary = json.loads((out / "summary.json").read_text())
    written = json.loads((GOLDEN / "summary.json").read_text())
    assert len(cells_of(summary)) == len(cells_of(written)) == 8


def test_compare_reads_a_summary_written_before(tmp_path: Path) -> None:
    a, b = copied(tmp_path, "a"), copied(tmp_path, "b")
    done = encbench("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    compared = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "PostgreSQL" in compared


def cells_of(summary: dict[str, object]) -> list[object]:
    """The PostgreSQL in-transit cells of a summary, under the study's name then or now."""
    parts = summary["studies"]
    assert isinstance(parts, dict)
    for part in parts.values():
        pg = part.get("postgresql", part)
        if "postgresql_version" in pg:
            return list(pg["cells"])
    return []
