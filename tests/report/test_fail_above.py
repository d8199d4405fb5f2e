"""`encbench compare A B --fail-above PCT`: exit 1, naming the cells, when a matched cell's
cost grew by more than PCT points with a significant change; otherwise exit 0.  The result
sets are prepared summaries (tests/report/test_compare.py's cells: their changes and significance
are checked there against hand computations)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from encbench.commands import rendering
from encbench.report import regressions
from encbench.report.models import Summary
from encbench.results.store import ResultStore
from tests.helpers import encbench_here
from tests.report.test_compare import cell, entry, summary_of
from tests.test_cli_bad_input import assert_one_line_error


def results(path: Path, summary: Summary) -> Path:
    """A results directory holding only this summary, as `compare` reads it."""
    store = ResultStore.create(path, "t", 'name = "t"\n')
    store.unlock()
    store.write_json("summary.json", summary.to_json())
    return path


# Overhead 10% in A; in B 20% with a tight interval, or 20% in noise too wide to tell.
A = summary_of(cell(4, entry(0.9, 0.02, 5)), cell(16, entry(0.9, 0.02, 5)))
B_WORSE = summary_of(cell(4, entry(0.8, 0.03, 10)), cell(16, entry(0.9, 0.02, 10)))
B_NOISY = summary_of(cell(4, entry(0.8, 0.5, 10)), cell(16, entry(0.9, 0.02, 10)))


def change_pp() -> float:
    """The 4-thread cell's change from A to B_WORSE, as compare computes it."""
    change = rendering.compare(A, B_WORSE, "A", "B").groups[0].cells[0].metrics["tps"]
    assert change.significant and change.change_pp is not None
    return change.change_pp


@pytest.fixture()
def sets(tmp_path: Path) -> dict[str, Path]:
    return {
        "a": results(tmp_path / "a", A),
        "worse": results(tmp_path / "worse", B_WORSE),
        "noisy": results(tmp_path / "noisy", B_NOISY),
    }


def test_a_cost_grown_beyond_the_threshold_and_significant_fails_naming_the_cell(
    sets: dict[str, Path],
) -> None:
    below = change_pp() - 1
    result = encbench_here(
        "compare", str(sets["a"]), str(sets["worse"]), "--fail-above", f"{below:g}"
    )
    assert result.returncode == 1, result.stderr
    named = [line for line in result.stderr.splitlines() if line.startswith("  ")]
    # Both compared metrics of the 4-thread cell (the prepared cells give both the same
    # estimate); the 16-thread cell did not change.
    assert len(named) == 2 and all(" 4 thr, " in line for line in named), named
    assert {line.split(", ")[1].split(":")[0] for line in named} == {"tps", "cpu_ms_per_txn"}
    assert f"{change_pp():+.1f} pp" in named[0]
    assert "| Threads |" in result.stdout  # the comparison itself is printed as before


def test_a_growth_within_the_threshold_passes(sets: dict[str, Path]) -> None:
    above = change_pp() + 1
    result = encbench_here(
        "compare", str(sets["a"]), str(sets["worse"]), "--fail-above", f"{above:g}"
    )
    assert result.returncode == 0, result.stderr
    assert (
        "no cost grew by more than" in result.stderr and "2 cells measured in both" in result.stderr
    )


def test_a_growth_the_noise_cannot_tell_from_none_passes(sets: dict[str, Path]) -> None:
    noisy = rendering.compare(A, B_NOISY, "A", "B").groups[0].cells[0].metrics["tps"]
    assert noisy.change_pp is not None and noisy.change_pp > 5 and noisy.significant is False
    result = encbench_here("compare", str(sets["a"]), str(sets["noisy"]), "--fail-above", "0")
    assert result.returncode == 0, result.stderr


def test_a_cost_that_shrank_passes_whatever_the_threshold(sets: dict[str, Path]) -> None:
    result = encbench_here("compare", str(sets["worse"]), str(sets["a"]), "--fail-above", "0")
    assert result.returncode == 0, result.stderr


def test_without_fail_above_a_grown_cost_still_exits_0(sets: dict[str, Path]) -> None:
    assert encbench_here("compare", str(sets["a"]), str(sets["worse"])).returncode == 0


def test_with_out_the_files_are_written_and_the_exit_still_says_it(
    sets: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cmp"
    result = encbench_here(
        "compare", str(sets["a"]), str(sets["worse"]), "--out", str(out), "--fail-above", "1"
    )
    assert result.returncode == 1
    assert json.loads((out / "comparison.json").read_text())["kind"] == "encbench-comparison"


@pytest.mark.parametrize("given", ["x", "-1", "nan", "inf", ""])
def test_a_threshold_that_is_no_number_of_points_is_one_line(
    sets: dict[str, Path], given: str
) -> None:
    result = encbench_here("compare", str(sets["a"]), str(sets["worse"]), "--fail-above", given)
    assert_one_line_error(result, f"--fail-above {given}", "e.g. --fail-above 2")


def test_cells_of_one_side_only_are_not_counted() -> None:
    one_sided = summary_of(cell(64, entry(0.5, 0.02, 5)))
    comparison = rendering.compare(A, one_sided, "A", "B")
    assert regressions.matched(comparison) == 0
    assert regressions.grown(comparison, 0) == []
