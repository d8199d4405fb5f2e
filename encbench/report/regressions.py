"""`encbench compare A B --fail-above PCT`: the cells whose cost of encryption grew from A to
B by more than PCT percentage points, with the change significant — Welch's test at 95%
(report/compare.py), that is, its interval clear of zero.  A CI job fails on them (exit 1).

Every metric the comparison shows counts (at rest TPS and server CPU per transaction, …).
Only cells measured on both sides have a change; a cell measured on one side is named by the
comparison, not counted here."""

from __future__ import annotations

import math
from dataclasses import dataclass

from encbench.errors import BadInput
from encbench.report.compare import Comparison


@dataclass(frozen=True)
class Grown:
    """One cell and metric whose cost grew by more than the threshold."""

    where: str  # the cell in words
    metric: str
    a_pct: float  # overhead in A
    b_pct: float  # overhead in B
    change_pp: float  # B − A: positive, costs more in B
    p: float | None

    def words(self) -> str:
        p = "" if self.p is None else f", p = {self.p:.3g}"
        return (
            f"{self.where}, {self.metric}: overhead {self.a_pct:+.1f}% → {self.b_pct:+.1f}% "
            f"({self.change_pp:+.1f} pp{p})"
        )


def threshold(given: str) -> float:
    """--fail-above's percentage points, as typed: a number of at least 0."""
    try:
        value = float(given)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise BadInput(
            f"--fail-above {given}: give the percentage points by which a cell's cost may "
            "grow from A to B, a number of at least 0, e.g. --fail-above 2"
        )
    return value


def grown(comparison: Comparison, above_pp: float) -> list[Grown]:
    """Every matched cell and metric whose overhead grew by more than `above_pp` points, the
    change significant."""
    found = []
    for group in comparison.groups:
        for cell in group.cells:
            for metric, entry in cell.metrics.items():
                if entry.a is None or entry.b is None or entry.change_pp is None:
                    continue
                if entry.significant is True and entry.change_pp > above_pp:
                    found.append(
                        Grown(
                            where=f"{group.study} {cell.name}",
                            metric=metric,
                            a_pct=entry.a.overhead_pct,
                            b_pct=entry.b.overhead_pct,
                            change_pp=entry.change_pp,
                            p=entry.p,
                        )
                    )
    return found


def matched(comparison: Comparison) -> int:
    """How many cells were measured on both sides (what --fail-above looked at)."""
    return sum(1 for g in comparison.groups for c in g.cells if c.only_in is None)
