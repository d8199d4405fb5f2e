"""The PostgreSQL in-transit part of summary.json, built from pg-in-transit.jsonl alone
(plus pg-in-transit.json: the PKI, the server's TLS settings and the per-cell proofs)."""

from __future__ import annotations

from encbench import estimates
from encbench.profile import Profile
from encbench.report import cells
from encbench.report.models import Record
from encbench.results.schema import Metric, primary_metric
from encbench.studies.in_transit.postgresql import cells as pg_cells
from encbench.studies.in_transit.postgresql.models import (
    PgInTransitSummary,
    PgTransitCellSummary,
    PgVariant,
)
from encbench.studies.in_transit.postgresql.options import pg_transit_options
from encbench.studies.in_transit.postgresql.records import PgTransitCell, PgTransitRecord

# Beside the study's own METRICS (tps): compared too, when both sides are above zero.
EXTRA_METRICS = (
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("server_cpu_ms_per_txn", "ms", "lower_is_better", cannot_improve=True),
)
PRIMARY = primary_metric(PgTransitRecord.METRICS).name


def variant_stats(runs: list[PgTransitRecord]) -> PgVariant:
    transactions = sum(r.transactions for r in runs)
    return PgVariant(
        tps=cells.sample(runs, lambda r: r.tps),
        latency_avg_ms=cells.sample(runs, lambda r: r.latency_avg_ms),
        connection_ms=cells.sample(runs, lambda r: r.connection_ms),
        server_cpu_ms_per_txn=1000 * sum(r.server_cpu_s for r in runs) / transactions,
        transactions=transactions,
        failed=sum(r.failed for r in runs),
        connections=sum(r.connections for r in runs),
        tls_connections=sum(r.tls_connections for r in runs),
    )


def wall_s(run: PgTransitRecord) -> float:
    return run.wall_s


def summarize_cell(
    cell: PgTransitCell, state: estimates.CellRounds, profile: Profile, record: Record
) -> PgTransitCellSummary:
    identity = {
        **{k: getattr(cell, k) for k in PgTransitCell.__dataclass_fields__},
        "label": cell.label,
        "proof": (record.get("proofs") or {}).get(cell.slug),
        "wire": (record.get("wire") or {}).get(cell.slug),
    }
    return cells.summarize_cell(
        PgTransitCellSummary,
        identity,
        state,
        pg_transit_options(profile),
        (*PgTransitRecord.METRICS, *EXTRA_METRICS),
        variant_stats,
        wall_s,
    )


def build(
    runs: list[PgTransitRecord], profile: Profile, record: Record | None, cores: int = 1
) -> PgInTransitSummary:
    record = record or {}
    t = pg_transit_options(profile)
    summaries, differences = cells.summarize_cells(
        pg_cells.cells(profile),
        runs,
        t,
        PRIMARY,
        lambda cell, state: summarize_cell(cell, state, profile, record),
    )
    return PgInTransitSummary(
        target_halfwidth_pct=t.target_halfwidth_pct,
        postgresql_version=record.get("postgresql_version"),
        scale=int(record.get("scale", t.scale)),
        server_user=record.get("server_user"),
        pki=record.get("pki"),
        server_settings=record.get("server_settings"),
        bulk_table=record.get("bulk_table"),
        delay_method=record.get("delay_method"),
        link=record.get("link"),
        skipped=record.get("skipped") or None,
        harness=cells.harness_share(runs, wall_s, cores),
        cells=summaries,
        differences=differences,
        target=record.get("target"),
    )
