"""The rule of a study that measures several kinds' cells in one run (at rest, in transit:
MariaDB's and PostgreSQL's): each cell by its own kind's section."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from encbench.engine.study import Rule


@dataclass(frozen=True)
class KindsRule:
    """The rule of a study's cells of several kinds: each cell's its own kind's (for_cell,
    planned_rounds), the rest its first measured kind's (what `plan` says of the study's
    rounds).  StudyDefinition.rule builds it."""

    first: Rule
    # Each further kind's cells, with their rule.
    others: tuple[tuple[Collection[Any], Rule], ...]

    def _of(self, cell: Any) -> Rule:
        return next((rule for cells, rule in self.others if cell in cells), self.first)

    def for_cell(self, cell: Any) -> Rule:
        return self._of(cell).for_cell(cell)

    def planned_rounds(self, cell: Any) -> int | None:
        return self._of(cell).planned_rounds(cell)

    @property
    def warmup_s(self) -> int:
        return self.first.warmup_s

    @property
    def run_s(self) -> int:
        return self.first.run_s

    @property
    def run_overhead_s(self) -> float:
        return self.first.run_overhead_s

    @property
    def block_s(self) -> float | None:
        return self.first.block_s

    @property
    def min_rounds(self) -> int:
        return self.first.min_rounds

    @property
    def max_rounds(self) -> int:
        return self.first.max_rounds

    @property
    def target_halfwidth_pct(self) -> float:
        return self.first.target_halfwidth_pct

    @property
    def cell_budget_s(self) -> float:
        return self.first.cell_budget_s

    @property
    def interference_max_pct(self) -> float:
        return self.first.interference_max_pct

    @property
    def equivalence_margin_pct(self) -> float:
        return self.first.equivalence_margin_pct
