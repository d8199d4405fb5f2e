"""A unit's interval over blocks (estimate/units.py): in a duet a round's value carries the
CPU each server sat on, and only a block (the CPUs swapped) cancels it, as in the study's
own intervals."""

from __future__ import annotations

import statistics

import pytest

from encbench import stats
from encbench.estimate import units


def test_a_cell_with_blocks_takes_its_interval_over_them_around_its_rounds_mean() -> None:
    # One server 40% dearer on one CPU: rounds swing, blocks do not.
    values = [10.0, 14.0, 14.5, 9.5, 10.5, 13.5]
    blocks = [(values[i] + values[i + 1]) / 2 for i in range(0, 6, 2)]
    low, high = units.cell_interval(values, blocks)
    by_rounds = units.cell_interval(values)
    assert high - low < (by_rounds[1] - by_rounds[0]) / 5
    assert low <= statistics.fmean(values) <= high
    expected = stats.mean_ci(statistics.fmean(blocks), statistics.stdev(blocks), 3)
    assert expected is not None
    assert high - low == pytest.approx(expected[1] - expected[0])


def test_a_cell_of_one_block_falls_back_to_its_rounds() -> None:
    values = [10.0, 14.0]
    assert units.cell_interval(values, [12.0]) == units.cell_interval(values)


def test_the_unit_holds_its_point_and_every_cells_block_interval() -> None:
    cells = [
        units.CellValues("a", [10.0, 14.0, 14.5, 9.5], "2026-12-07T00:00:00", [12.0, 12.0 + 0.01]),
        units.CellValues("b", [4.0, 6.0, 5.5, 4.5], "2026-12-07T00:00:00", [5.0, 5.0 + 0.02]),
    ]
    unit = units._summarize(
        "page_written", cells, what_cells="write cells", configuration="x", cipher=None,
        source="here",
    )  # fmt: skip
    assert isinstance(unit, units.Unit)
    low, high = unit.ci_us
    assert low <= unit.us <= high
    for c in cells:
        a, b = units.cell_interval(c.values, c.blocks)
        assert low <= a and b <= high
