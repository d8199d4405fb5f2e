"""The at-rest section of a further kind's cells: a table per regime of both sides'
transactions per second, the share lost to encryption with its interval and the verdict.
PostgreSQL's section (postgresql_section.py) adds its own columns and words; a kind without
words of its own is shown by this alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from encbench import stats
from encbench.report import suspect
from encbench.report.cells import (
    overhead_cell,
    rounds_text,
    verdict_notes,
    verdict_text,
)
from encbench.report.models import NoiseFloor, Spread
from encbench.report.tables import Block, Bullets, Cell, Section, Table, row
from encbench.servers import server_kind
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary
from encbench.studies.at_rest.records import RunRecord

# Their words where the encrypted side came out better in one (report/suspect.py).
FLAGGED = {
    "tps": "transactions per second",
    "latency_avg_ms": "average latency",
    "cpu_ms_per_txn": "server CPU per transaction",
}
HEADER = [
    "workload",
    "clients",
    "rounds",
    "plain tps (95% CI)",
    "encrypted tps (95% CI)",
    "lost to encryption (95% CI)",
    "verdict",
]


def label(cell: AtRestCell) -> str:
    """A further kind's cell as its runs name it (CellKey.label)."""
    return f"{cell.regime} {cell.workload} {cell.threads} cl"


def _tps(tps: Spread, rounds: int) -> str:
    """A side's transactions per second: the mean over rounds and its 95% CI."""
    interval = stats.mean_ci(tps.mean, tps.stdev, rounds)
    if interval is None:
        return f"{tps.mean:,.1f}"
    return f"{tps.mean:,.1f} ({interval[0]:,.1f}–{interval[1]:,.1f})"


def tps_row(
    cell: AtRestCell,
    workloads: Mapping[str, str],
    own: Sequence[Callable[[AtRestCell], str]] = (),
) -> list[Cell]:
    """A row: where the cell is (its workload in `workloads`' words), both sides' TPS, the
    share lost with its CI and the verdict (styled by its kind), then the kind's `own`
    columns; a cell not measured has "–" for each figure and its status as the verdict."""
    where = [workloads.get(cell.workload, cell.workload), str(cell.threads), rounds_text(cell)]
    verdict = len(where) + 3
    comp = cell.comparisons.get("tps")
    if not cell.rounds or cell.variants is None or comp is None:
        blank = ["–"] * len(own)
        return row(*where, "–", "–", "–", cell.status, *blank, styles={verdict: "na"})
    v = cell.variants
    return row(
        *where,
        _tps(v.plain.tps, cell.rounds),
        _tps(v.encrypted.tps, cell.rounds),
        overhead_cell(comp),
        verdict_text(comp),
        *(column(cell) for column in own),
        styles={verdict: comp.kind},
    )


def summary_items(
    part: AtRestSummary, cells: Sequence[AtRestCell], noise: NoiseFloor | None, alone: bool
) -> list[str]:
    """Its summary bullets: the study's differences across cells where it is the study's
    only kind (`alone`; else the first kind's section says them), an encrypted side that
    came out better in a figure encryption only adds work to, the rounds measured again."""
    return suspect.summary_items(
        part.differences if alone else None,
        suspect.implausible_items(((label(c), c) for c in cells), FLAGGED),
        suspect.PATHS,
        noise,
        RunRecord.STUDY,
    )


def sections(
    part: AtRestSummary,
    kind: str,
    cells: Sequence[AtRestCell],
    noise: NoiseFloor | None = None,
    *,
    alone: bool,
) -> list[Section]:
    """A kind's section without words of its own: its summary, then a table per regime."""
    title = server_kind.named(kind).title
    blocks: list[Block] = []
    summary = summary_items(part, cells, noise, alone)
    if summary:
        blocks.append(Bullets(summary))
    for regime in dict.fromkeys(c.regime for c in cells):
        group = [c for c in cells if c.regime == regime]
        notes = verdict_notes([c.comparisons.get("tps") for c in group], part.differences)
        table = Table(HEADER, [tps_row(c, {}) for c in group], notes=notes)
        blocks.append(Section(f"{title}, {regime}", [table], level=3))
    return [Section(f"{title} at rest: what encryption costs", blocks)]
