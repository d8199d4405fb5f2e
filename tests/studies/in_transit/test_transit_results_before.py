"""Results written when PostgreSQL's in-transit cells were a study of their own
(tests/golden/pg-in-transit: pg-in-transit.jsonl, pg-in-transit.json, a summary.json with a
pg-in-transit part) still open: `encbench report` renders them again from their runs as the
in-transit study's, and `encbench compare` builds their summary again from the runs (their
summary.json left as it was) and matches their cells with those written now."""

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
    assert len(cells_of(summary, "in-transit")) == len(cells_of(written, "pg-in-transit")) == 8
    assert {c["kind"] for c in cells_of(summary, "in-transit")} == {"postgresql"}
    # Every run of the earlier file is counted, as it was then.
    rounds = [c["rounds"] for c in cells_of(summary, "in-transit")]
    assert rounds == [c["rounds"] for c in cells_of(written, "pg-in-transit")]


def test_compare_reads_a_summary_written_before(tmp_path: Path) -> None:
    a, b = copied(tmp_path, "a"), copied(tmp_path, "b")
    done = encbench_here("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    compared = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "PostgreSQL" in compared and "only in" not in compared
    assert json.loads((a / "summary.json").read_text()) == json.loads(
        (GOLDEN / "summary.json").read_text()
    )  # left as it was written


def test_compare_matches_the_cells_written_before_with_those_written_now(tmp_path: Path) -> None:
    before, now = copied(tmp_path, "before"), copied(tmp_path, "now")
    assert (
        encbench_here("report", str(now)).returncode == 0
    )  # its summary as this encbench writes it
    done = encbench_here("compare", str(before), str(now), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    compared = (tmp_path / "cmp" / "comparison.md").read_text()
    # Every cell matched, in the study's one table of the rate lost.
    assert "only in" not in compared and "Rate lost to encryption" in compared


def cells_of(summary: dict[str, object], part: str) -> list[dict[str, object]]:
    """The cells of a summary's part: pg-in-transit then, in-transit now."""
    parts = summary["studies"]
    assert isinstance(parts, dict)
    return list(parts[part]["cells"])
