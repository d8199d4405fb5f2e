"""The PostgreSQL at-rest part of summary.json, built from pg-at-rest.jsonl alone (plus
pg-at-rest.json: the data's size, each regime's memory, the filesystems and their proof)."""

from __future__ import annotations

from encbench import estimates
from encbench.profile import Profile
from encbench.report import cells
from encbench.report.models import Record
from encbench.results.schema import Metric, primary_metric
from encbench.studies.at_rest.postgresql import cells as pg_cells
from encbench.studies.at_rest.postgresql.models import (
    PgAtRestCellSummary,
    PgAtRestSummary,
    PgAtRestVariant,
)
from encbench.studies.at_rest.postgresql.options import pg_at_rest_options
from encbench.studies.at_rest.postgresql.records import PgAtRestCell, PgAtRestRecord

# Beside the study's own METRICS (tps): compared too, when both sides are above zero.
EXTRA_METRICS = (
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("server_cpu_ms_per_txn", "ms", "lower_is_better", cannot_improve=True),
)
PRIMARY = primary_metric(PgAtRestRecord.METRICS).name
MIB = 2**20


def variant_stats(runs: list[PgAtRestRecord]) -> PgAtRestVariant:
    transactions = sum(r.transactions for r in runs)
    caches = [r.page_cache_bytes for r in runs]
    checkpoints = [r.checkpoint_s for r in runs if r.checkpoint_s is not None]
    return PgAtRestVariant(
        tps=cells.sample(runs, lambda r: r.tps),
        latency_avg_ms=cells.sample(runs, lambda r: r.latency_avg_ms),
        server_cpu_ms_per_txn=1000 * sum(r.server_cpu_s for r in runs) / transactions,
        transactions=transactions,
        failed=sum(r.failed for r in runs),
        page_cache_mib=sum(caches) / len(caches) / MIB,
        page_cache_max_mib=max(caches) / MIB,
        cache_share_of_data=max(r.cache_share_of_data for r in runs),
        memory_limit_mib=max(r.memory_limit_bytes for r in runs) / MIB,
        checkpoint_s=sum(checkpoints) / len(checkpoints) if checkpoints else None,
    )


def wall_s(run: PgAtRestRecord) -> float:
    return run.wall_s


def summarize_cell(
    cell: PgAtRestCell, state: estimates.CellRounds, profile: Profile
) -> PgAtRestCellSummary:
    identity = {
        **{k: getattr(cell, k) for k in PgAtRestCell.__dataclass_fields__},
        "label": cell.label,
    }
    return cells.summarize_cell(
        PgAtRestCellSummary,
        identity,
        state,
        pg_at_rest_options(profile),
        (*PgAtRestRecord.METRICS, *EXTRA_METRICS),
        variant_stats,
        wall_s,
    )


def build(
    runs: list[PgAtRestRecord], profile: Profile, record: Record | None, cores: int = 1
) -> PgAtRestSummary:
    record = record or {}
    s = pg_at_rest_options(profile)
    summaries, differences = cells.summarize_cells(
        pg_cells.cells(profile),
        runs,
        s,
        PRIMARY,
        lambda cell, state: summarize_cell(cell, state, profile),
    )
    return PgAtRestSummary(
        target_halfwidth_pct=s.target_halfwidth_pct,
        postgresql_version=record.get("postgresql_version"),
        scale=int(record.get("scale", s.scale)),
        server_user=record.get("server_user"),
        data_bytes=record.get("data_bytes"),
        regimes=record.get("regimes"),
        filesystem=record.get("filesystem"),
        harness=cells.harness_share(runs, wall_s, cores),
        cells=summaries,
        differences=differences,
    )
