"""The rule of a study that measures MariaDB's and PostgreSQL's cells in one run (at rest,
in transit): each cell by its own kind's section."""

from __future__ import annotations

from dataclasses import dataclass

from encbench.options import Rounds


@dataclass(frozen=True)
class KindsRule:
    """The rule of a study's cells of both kinds: each cell's its own kind's section's
    (for_cell), the rest MariaDB's (what `plan` says of the study's rounds)."""

    mariadb: Rounds
    postgresql: Rounds
    postgresql_cell: type  # the type of PostgreSQL's cells

    def _of(self, cell: object) -> Rounds:
        return self.postgresql if isinstance(cell, self.postgresql_cell) else self.mariadb

    def for_cell(self, cell: object) -> Rounds:
        return self._of(cell).for_cell(cell)

    def planned_rounds(self, cell: object) -> int | None:
        return self._of(cell).planned_rounds(cell)

    @property
    def warmup_s(self) -> int:
        return self.mariadb.warmup_s

    @property
    def run_s(self) -> int:
        return self.mariadb.run_s

    @property
    def run_overhead_s(self) -> float:
        return self.mariadb.run_overhead_s

    @property
    def min_rounds(self) -> int:
        return self.mariadb.min_rounds

    @property
    def max_rounds(self) -> int:
        return self.mariadb.max_rounds

    @property
    def target_halfwidth_pct(self) -> float:
        return self.mariadb.target_halfwidth_pct

    @property
    def cell_budget_s(self) -> float:
        return self.mariadb.cell_budget_s

    @property
    def interference_max_pct(self) -> float:
        return self.mariadb.interference_max_pct

    @property
    def equivalence_margin_pct(self) -> float:
        return self.mariadb.equivalence_margin_pct
