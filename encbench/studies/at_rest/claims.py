"""Two claims of the Alibaba Cloud "ApsaraDB RDS: TDE test report" about encryption at rest,
tested on the measured cells: "writes cost more than reads"; "low concurrency costs more than
high".

Each claim is a contrast between cells' costs, in throughput and (as the report gave it too)
in server CPU per transaction. A cell's cost is c = −ln(TPS ratio encrypted/plain), or
+ln(CPU-per-transaction ratio), from its Hodges–Lehmann estimate (≈ the overhead in percent
/ 100 for small effects), and its standard error is recovered from its 95% interval as if it
were normal: se = (ln high − ln low) / (2 × 1.96) — the interval is already widened for
autocorrelation and Stein's guard, so the error carries that too. Cells are measured at
different times by separate paired rounds, so their errors are taken as independent: a
contrast of group means d = mean(c of group A) − mean(c of group B) has se² = Σ se_a² / n_a²
+ Σ se_b² / n_b², and its 95% interval is d ± 1.96 se. The claim holds where the interval
lies above 0 and is reversed below 0. Otherwise the interval holds 0, and what it says is a
bound: no difference beyond ±m points, m the larger of its two ends — the reader compares m
with the published difference (the report's "up to 20% at low concurrency, under 5% at
high" is a claim of some 15 points) rather than reading "inconclusive".  Cells without an
interval (too few rounds) take no part.

Writes are the pure write workloads (WRITES); reads are oltp_read_only and oltp_point_select;
oltp_read_write, a mix, is in neither.  Only thread counts and settings (regime,
configuration) where both groups were measured are compared, so neither side gains from a
thread count the other lacks.  "Low" is each workload's fewest threads, "high" its most.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from encbench.studies.at_rest.models import AtRestCell

# The published study the claims come from, as the report names it.
SOURCE = 'the Alibaba Cloud "ApsaraDB RDS: TDE test report"'
TITLE = 'Claims of the Alibaba Cloud "ApsaraDB RDS: TDE test report"'
INTRO = (
    f"{SOURCE[0].upper()}{SOURCE[1:]} (RDS for MySQL 8.0 with TDE) found encryption at rest "
    "costing most in writes and at low concurrency. Its two claims, tested on this run's "
    "cells where both sides of a claim were measured:"
)
Z95 = 1.959963984540054
WRITES = ("oltp_write_only", "oltp_update_index", "oltp_update_non_index", "oltp_insert")
READS = ("oltp_read_only", "oltp_point_select")
METHOD = (
    "A claim is a difference of costs, cost = −ln(encrypted/plain TPS) ×100, or "
    "ln(encrypted/plain server CPU per transaction) ×100 (each ≈ the overhead in %), between "
    "group means of cells; each cell's error comes from its 95% interval "
    "(as if normal), cells count as independent, and the difference's 95% interval is "
    "±1.96 standard errors. It holds where the interval lies above 0, is reversed where it "
    "lies below 0, and otherwise any difference is within ±m points, m the interval's "
    "farther end from 0."
)
# The metrics a claim is tested in, with the words the report uses for each.
MEASURES = {"tps": "TPS", "cpu_ms_per_txn": "server CPU per txn"}


@dataclass(frozen=True)
class CellCost:
    """One cell's cost of encryption in throughput, in log terms, with its standard error."""

    workload: str
    setting: str
    threads: int
    cost: float
    se: float
    # The cell's own 95% interval in the cost's terms (log; `se` is its symmetric reading).
    ends: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class Contrast:
    """Group A's mean cost minus group B's, with its 95% interval (×100: ≈ points of %)."""

    claim: str
    compared: str
    difference: float
    ci: tuple[float, float]
    cells: tuple[int, int]  # cells in A, in B
    metric: str = "tps"

    @property
    def bound(self) -> float:
        """The farthest the difference may lie from 0 at 95%: the interval's farther end."""
        return max(abs(self.ci[0]), abs(self.ci[1]))

    @property
    def verdict(self) -> str:
        low, high = self.ci
        if low > 0:
            return "holds"
        if high < 0:
            return "reversed"
        # Rounded as the interval beside it is printed, so that the two read alike.
        return f"no difference beyond ±{self.bound:.1f} points"

    @property
    def kind(self) -> str:
        """The report's verdict style: cost where the claim holds, gain where reversed,
        `unsure` where only a bound is known."""
        low, high = self.ci
        return "cost" if low > 0 else "gain" if high < 0 else "unsure"


def cell_cost(cell: AtRestCell, metric: str = "tps", setting: str | None = None) -> CellCost | None:
    """A cell's cost in one metric, in log terms, with its standard error from its 95%
    interval: fewer TPS is a cost, more of a lower-is-better metric (CPU, latency) too.
    `setting` groups the cell (default: its regime and configuration)."""
    comp = cell.comparisons.get(metric) if cell.rounds else None
    if comp is None or comp.ci_low is None or comp.ci_high is None:
        return None
    if comp.ci_low <= 0 or comp.ci_high <= 0:
        return None
    sign = -1.0 if metric == "tps" else 1.0
    low, high = sorted(sign * math.log(x) for x in (comp.ci_low, comp.ci_high))
    return CellCost(
        workload=cell.workload,
        setting=cell.setting if setting is None else setting,
        threads=cell.threads,
        cost=sign * math.log(comp.ratio),
        se=(high - low) / (2 * Z95),
        ends=(low, high),
    )


def contrast(
    claim: str, compared: str, a: Sequence[CellCost], b: Sequence[CellCost], metric: str = "tps"
) -> Contrast:
    mean_a = sum(c.cost for c in a) / len(a)
    mean_b = sum(c.cost for c in b) / len(b)
    var = sum(c.se**2 for c in a) / len(a) ** 2 + sum(c.se**2 for c in b) / len(b) ** 2
    d, half = mean_a - mean_b, Z95 * math.sqrt(var)
    return Contrast(
        claim, compared, 100 * d, (100 * (d - half), 100 * (d + half)), (len(a), len(b)), metric
    )


WRITES_CLAIM = "writes cost more than reads"
CONCURRENCY_CLAIM = "low concurrency costs more than high"


def writes_versus_reads(costs: Sequence[CellCost]) -> list[Contrast]:
    """Per write workload, then all writes together, against the reads measured at the same
    settings and thread counts."""
    reads = [c for c in costs if c.workload in READS]
    read_at = {(c.setting, c.threads) for c in reads}
    out = []
    writes = [c for c in costs if c.workload in WRITES and (c.setting, c.threads) in read_at]
    for workload in WRITES:
        mine = [c for c in writes if c.workload == workload]
        if not mine:
            continue
        where = {(c.setting, c.threads) for c in mine}
        base = [c for c in reads if (c.setting, c.threads) in where]
        out.append(contrast(WRITES_CLAIM, f"{workload} vs reads", mine, base))
    if len(out) > 1:
        where = {(c.setting, c.threads) for c in writes}
        base = [c for c in reads if (c.setting, c.threads) in where]
        out.append(contrast(WRITES_CLAIM, "all writes vs reads", writes, base))
    return out


def low_versus_high(costs: Sequence[CellCost]) -> list[Contrast]:
    """Per workload and setting, the fewest threads against the most; then all together."""
    lows: list[CellCost] = []
    highs: list[CellCost] = []
    out = []
    groups: dict[tuple[str, str], list[CellCost]] = {}
    for c in costs:
        groups.setdefault((c.workload, c.setting), []).append(c)
    for (workload, setting), cells in groups.items():
        if len(cells) < 2:
            continue
        low = min(cells, key=lambda c: c.threads)
        high = max(cells, key=lambda c: c.threads)
        lows.append(low)
        highs.append(high)
        compared = f"{workload}, {setting}: {low.threads} vs {high.threads} threads"
        out.append(contrast(CONCURRENCY_CLAIM, compared, [low], [high]))
    if len(out) > 1:
        out.append(
            contrast(CONCURRENCY_CLAIM, "all workloads: fewest vs most threads", lows, highs)
        )
    return out


def claims(cells: Sequence[AtRestCell], metric: str = "tps") -> tuple[list[Contrast], int]:
    """Both claims' contrasts in one metric, and how many measured cells had no interval in
    it to take part."""
    # Claims about encryption against none: cells of scope all against scope tables are not.
    cells = [cell for cell in cells if not cell.against]
    costs = [c for cell in cells if (c := cell_cost(cell, metric)) is not None]
    left_out = sum(1 for cell in cells if cell.rounds and cell_cost(cell, metric) is None)
    found = writes_versus_reads(costs) + low_versus_high(costs)
    return [replace(c, metric=metric) for c in found], left_out


def in_words(contrasts: Sequence[Contrast]) -> list[str]:
    """Each claim's ending per metric, in one line: the pooled contrast (all writes, all
    workloads) where there is one, else the only one."""
    lines = []
    for claim in (WRITES_CLAIM, CONCURRENCY_CLAIM):
        ends = []
        for metric, words in MEASURES.items():
            mine = [c for c in contrasts if c.claim == claim and c.metric == metric]
            if not mine:
                continue
            # writes_versus_reads and low_versus_high put the pooled contrast last.
            pooled = mine[-1]
            low, high = pooled.ci
            ends.append(
                f"in {words}, {pooled.verdict} ({pooled.difference:+.1f}, 95% CI {low:+.1f} … "
                f"{high:+.1f}; {pooled.compared})"
            )
        if ends:
            lines.append(f"**{claim[0].upper()}{claim[1:]}**: " + "; ".join(ends) + ".")
    return lines
