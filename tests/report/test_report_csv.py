"""report.csv: one row per cell and metric, as Python's csv module reads it, each figure the
summary's own; every study's cells identified by their own fields."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from encbench.report import documents, table_csv
from encbench.report.models import Summary
from tests.helpers import encbench_here
from tests.report.test_html_report import GOLDEN, golden_summary
from tests.report.test_summary_schema import _every_study

REQUIRED = ["study", "cell", "metric", "encrypted", "plain", "cost_pct", "ci_low_pct",
            "ci_high_pct", "verdict", "rounds"]  # fmt: skip


def read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def number(text: str) -> float | None:
    return float(text) if text else None


def test_each_row_is_one_cell_and_metric_with_the_summarys_own_figures() -> None:
    summary = golden_summary()
    found = read(table_csv.render(summary))
    cells = summary.part("at-rest").cells
    assert len(found) == sum(len(c.comparisons) for c in cells)
    assert set(REQUIRED) <= set(found[0])
    by_key = {(r["regime"], int(r["threads"]), r["metric"]): r for r in found}
    for cell in cells:
        for metric, estimate in cell.comparisons.items():
            row = by_key[(cell.regime, cell.threads, metric)]
            assert row["study"] == "at-rest" and row["workload"] == cell.workload
            assert number(row["cost_pct"]) == pytest.approx(estimate.overhead_pct)
            low, high = estimate.overhead_ci_pct or (None, None)
            assert number(row["ci_low_pct"]) == low and number(row["ci_high_pct"]) == high
            assert row["verdict"] == estimate.verdict and row["verdict_kind"] == estimate.kind
            assert int(row["rounds"]) == cell.rounds
            assert cell.variants is not None
            assert number(row["encrypted"]) == getattr(cell.variants.encrypted, metric).mean
            assert number(row["plain"]) == getattr(cell.variants.plain, metric).mean


def test_a_cell_without_an_interval_leaves_its_interval_empty() -> None:
    found = read(table_csv.render(golden_summary()))
    no_interval = [r for r in found if r["ci_low_pct"] == ""]
    assert no_interval, "the golden summary has a cell of one round"
    assert all(r["ci_high_pct"] == "" and r["cost_pct"] for r in no_interval)


def test_every_studys_cells_are_told_apart_by_their_own_fields() -> None:
    parts = _every_study()
    summary = documents.summarize("all", None, parts)
    header, found = table_csv.rows(summary)
    assert len(found) == sum(len(c.comparisons) for p in parts.values() for c in p.cells)
    for name, part in parts.items():
        identities = [tuple(table_csv.identity(c).items()) for c in part.cells]
        assert len(identities) > 1 and len(set(identities)) == len(identities), name
        assert all(key in header for identity in identities for key, _ in identity)
    assert all(
        isinstance(v, str | int | float | bool)
        for part in parts.values()
        for c in part.cells
        for v in table_csv.identity(c).values()
    )
    rows = read(table_csv.render(summary))
    assert {r["study"] for r in rows} == set(parts)
    assert all(r["cell"] and r["metric"] and r["cost_pct"] for r in rows)


def test_encbench_report_csv_writes_report_csv_beside_the_report(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    store = ResultStore.create(tmp_path / "run", "golden", (GOLDEN / "profile.toml").read_text())
    store.unlock()
    for name in ("at-rest.jsonl", "at-rest.json", "environment.json"):
        shutil.copy(GOLDEN / name, store.path / name)
    result = encbench_here("report", str(store.path), "--csv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == str(store.path / "report.csv")
    written = (store.path / "report.csv").read_text()
    summary = Summary.model_validate(
        json.loads((store.path / "summary.json").read_text()),
        context={"parts": {"at-rest": type(golden_summary().part("at-rest"))}},
    )
    assert read(written) == read(table_csv.render(summary))
    assert len(read(written)) == sum(len(c.comparisons) for c in summary.part("at-rest").cells)


def test_a_field_that_is_no_plain_value_is_no_column() -> None:
    """A figure a shared base model lists first (a cell's `bound`, say) identifies nothing."""
    from encbench.report.models import Model, Spread

    class Base(Model):
        spread: Spread | None = None

    class Cell(Base):
        workload: str
        threads: int
        label: str
        rounds: int

    cell = Cell(spread=Spread(mean=1, stdev=0), workload="w", threads=2, label="w 2", rounds=3)
    assert table_csv.identity(cell) == {"workload": "w", "threads": 2}
