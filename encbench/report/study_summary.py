"""What a study's part of summary.json holds as most studies build it, written once: a cell's
summary begins with the cell's own fields and label (`identity`); the part holds the stopping
rule's target, the harness's share of the machine, every cell summarized and the differences
Holm's adjustment leaves (`study_fields`), beside what the study's own record says of its
servers (`recorded`).  A study adds what is its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from encbench.engine import stopping_rule
from encbench.report.cells import harness_share, summarize_cells
from encbench.report.models import CellPart, Record

K = TypeVar("K")


def identity(cell: Any) -> dict[str, Any]:
    """A cell's own fields (its record's cell) and its label: what its summary begins with."""
    fields = {name: getattr(cell, name) for name in cell.__dataclass_fields__}
    return {**fields, "label": cell.label}


def study_fields(
    cells: Iterable[K],
    runs: Sequence[Any],  # the study's run records
    rule: stopping_rule.StopRule,
    primary: str,
    summarize: Callable[[K, stopping_rule.CellRounds], CellPart],
    cores: int,
    name: Callable[[K], str] | None = None,
) -> dict[str, Any]:
    """The fields every study's part has: the stopping rule's target half-width, encbench's
    own share of the machine over the runs' `timed` seconds, every cell `summarize`d from its
    rounds, and the differences left after Holm's adjustment of the `primary` metric (each
    cell named by `name`, default its label)."""
    summaries, differences = summarize_cells(cells, runs, rule, primary, summarize, name)
    return {
        "target_halfwidth_pct": rule.target_halfwidth_pct,
        "harness": harness_share(runs, cores),
        "cells": summaries,
        "differences": differences,
    }


def recorded(record: Record, names: Iterable[str]) -> dict[str, Any]:
    """The study's own record's fields of these names (None where it has none)."""
    return {name: record.get(name) for name in names}
