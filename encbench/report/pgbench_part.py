"""What the report's parts of pgbench's runs share (PostgreSQL at rest, in transit), written
once: the metrics compared beside TPS, the figures every variant of theirs begins with, a
cell's summary from its rounds, the part's summary, a row of their tables, and the pieces of
their ReportPart that read only the server's version.  Each part passes its own models, cells
and words."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from encbench.engine import stopping_rule
from encbench.report import cells, suspect
from encbench.report.cell_summary import CellSummary
from encbench.report.models import CellPart, Model, NoiseFloor, Record, Sample
from encbench.report.parts import Across, ReportPart, Setup, summary_builder
from encbench.report.study_parts import compared_cells, sections_with_floor, versions
from encbench.report.study_summary import recorded, study_fields
from encbench.report.tables import Cell, Section, row
from encbench.results.pgbench_run import PGBENCH_METRICS, PgbenchRun
from encbench.results.schema import Metric, primary_metric

M = TypeVar("M", bound=Model)
K = TypeVar("K")
C = TypeVar("C", bound=CellSummary[Any])

# Beside pgbench's own METRICS (tps): compared too, when both sides are above zero.
EXTRA_METRICS = (
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("server_cpu_ms_per_txn", "ms", "lower_is_better", cannot_improve=True),
)
COMPARED = (*PGBENCH_METRICS, *EXTRA_METRICS)
# Their words where the encrypted side came out better in one (report/suspect.py).
FLAGGED = {
    "tps": "transactions per second",
    "latency_avg_ms": "average latency",
    "server_cpu_ms_per_txn": "server CPU per transaction",
}
# The metric whose interval decides when a cell stops (as the runner decides it).
PRIMARY = primary_metric(PGBENCH_METRICS).name


def variant_fields(runs: Sequence[PgbenchRun]) -> dict[str, Any]:
    """What every pgbench variant's summary begins with: TPS and latency with their spread,
    the server's CPU per transaction over all runs, the transactions and the failed ones."""
    transactions = sum(r.transactions for r in runs)
    return {
        "tps": cells.sample(runs, lambda r: r.tps),
        "latency_avg_ms": cells.sample(runs, lambda r: r.latency_avg_ms),
        "server_cpu_ms_per_txn": 1000 * sum(r.server_cpu_s for r in runs) / transactions,
        "transactions": transactions,
        "failed": sum(r.failed for r in runs),
    }


class PgbenchRule(stopping_rule.StopRule, Protocol):
    """A pgbench study's options: the stopping rule and the scale its data is loaded at."""

    @property
    def scale(self) -> int: ...


def part(
    model: type[M],
    cells: Iterable[K],
    runs: Sequence[PgbenchRun],
    rule: PgbenchRule,
    summarize: Callable[[K, stopping_rule.CellRounds], CellPart],
    cores: int,
    *,
    record: Record,
    recorded_fields: Iterable[str],
    **own: Any,
) -> M:
    """A pgbench study's part of summary.json: its own `record`'s `recorded_fields`, the
    scale its data was loaded at (the record's; the options' before a run wrote one), what
    else is the study's `own`, and what every study's part has (study_fields): TPS adjusted
    by Holm's over its cells, the harness's share over its runs' whole time."""
    fields = {
        **recorded(record, recorded_fields),
        "scale": int(record.get("scale", rule.scale)),
        **own,
        **study_fields(cells, runs, rule, PRIMARY, summarize, cores),
    }
    return model(**fields)


def summarize_cell(
    model: type[M],
    identity: dict[str, Any],
    state: stopping_rule.CellRounds,
    rule: stopping_rule.StopRule,
    variant_stats: Callable[[list[Any]], Any],
) -> M:
    """A pgbench cell's summary (report/cells.summarize_cell) over COMPARED, timed by its
    runs' whole time."""
    return cells.summarize_cell(model, identity, state, rule, COMPARED, variant_stats)


def tps_text(tps: Sample) -> str:
    """A side's transactions per second as the tables write them: the mean, its 95% CI."""
    if not tps.ci95:
        return f"{tps.mean:,.1f}"
    return f"{tps.mean:,.1f} ({tps.ci95[0]:,.1f}–{tps.ci95[1]:,.1f})"


def tps_row(cell: C, where: Sequence[str], own: Sequence[Callable[[C], str]]) -> list[Cell]:
    """A row of a pgbench part's table: the columns that say `where` the cell is, both sides'
    TPS, the share lost with its CI and the verdict (styled by its kind), then the study's
    `own` columns; a cell not measured has "–" for each figure and its status as the
    verdict."""
    verdict = len(where) + 3  # the verdict's column
    comp = cell.comparisons.get("tps")
    if not cell.rounds or cell.variants is None or comp is None:
        blank = ["–"] * len(own)
        return row(*where, "–", "–", "–", cell.status, *blank, styles={verdict: "na"})
    return row(
        *where,
        tps_text(cell.variants.plain.tps),
        tps_text(cell.variants.encrypted.tps),
        cells.overhead_cell(comp),
        cells.verdict_text(comp),
        *(column(cell) for column in own),
        styles={verdict: comp.kind},
    )


# ReportPart.compare_setup: the server's version, as `compare` sets it beside another's.
compare_setup = versions({"PostgreSQL": "postgresql_version"})


def server_setup(part: Any) -> Setup:
    """ReportPart.setup: the version of the server it measured (a target's own, not this
    machine's)."""
    return Setup(server_version=part.postgresql_version)


def summary_items(part: Any, noise: NoiseFloor | None, study: str) -> list[str]:
    """The part's summary bullets (report/suspect.py): which cells differ, before and after
    Holm, a path that came out better in a figure encryption only adds work to, and the
    rounds measured again."""
    return suspect.summary_items(
        part.differences,
        suspect.implausible_items(((c.label, c) for c in part.cells), FLAGGED),
        suspect.PATHS,
        noise,
        study,
    )


def report_part(
    model: type[Model],
    record_type: type[PgbenchRun],
    summarize: Callable[[list[Any], Any, Any, int], Model],
    sections: Callable[[Any, NoiseFloor | None], list[Section]],
    *,
    lost_to: str,
    group: Callable[[Any], str],
    row_header: str,
    label: Callable[[Any], str],
    setup: Callable[[Any], Setup] = server_setup,
    across: Callable[[Any], list[Across]] = lambda part: [],
) -> ReportPart:
    """A pgbench part's ReportPart: its summary built by `summarize` from its results file
    and record (summary_builder), its `sections` judged by this machine's noise floor, its
    cells matched by `compare` under their own key, each in its `group` by its `label` (its
    clients its threads), TPS compared as what is `lost_to` encryption, and the server's
    version set beside another's."""
    return ReportPart(
        model=model,
        build=summary_builder(record_type, summarize),
        sections=sections_with_floor(sections),
        compared=compared_cells(
            record_type.STUDY,
            lambda c: c.key,
            group=group,
            row_header=row_header,
            threads=lambda c: c.clients,
            label=label,
        ),
        compare_metrics={"tps": f"PostgreSQL transactions per second lost to {lost_to}"},
        compare_setup=compare_setup,
        setup=setup,
        across=across,
    )
