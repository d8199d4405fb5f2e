"""The PostgreSQL in-transit part of summary.json, built from pg-in-transit.jsonl alone
(plus pg-in-transit.json: the PKI, the server's TLS settings and the per-cell proofs)."""

from __future__ import annotations

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells, pgbench_part
from encbench.report.models import Record
from encbench.report.study_summary import identity
from encbench.studies.in_transit.postgresql import cells as pg_cells
from encbench.studies.in_transit.postgresql.models import (
    PgInTransitSummary,
    PgTransitCellSummary,
    PgVariant,
)
from encbench.studies.in_transit.postgresql.options import pg_transit_options
from encbench.studies.in_transit.postgresql.records import PgTransitCell, PgTransitRecord


def variant_stats(runs: list[PgTransitRecord]) -> PgVariant:
    return PgVariant(
        **pgbench_part.variant_fields(runs),
        connection_ms=cells.sample(runs, lambda r: r.connection_ms),
        connections=sum(r.connections for r in runs),
        tls_connections=sum(r.tls_connections for r in runs),
    )


def summarize_cell(
    cell: PgTransitCell, state: stopping_rule.CellRounds, profile: Profile, record: Record
) -> PgTransitCellSummary:
    own = {
        **identity(cell),
        "proof": (record.get("proofs") or {}).get(cell.slug),
        "wire": (record.get("wire") or {}).get(cell.slug),
    }
    return pgbench_part.summarize_cell(
        PgTransitCellSummary, own, state, pg_transit_options(profile), variant_stats
    )


def build(
    runs: list[PgTransitRecord], profile: Profile, record: Record | None, cores: int = 1
) -> PgInTransitSummary:
    record = record or {}
    return pgbench_part.part(
        PgInTransitSummary,
        pg_cells.cells(profile),
        runs,
        pg_transit_options(profile),
        lambda cell, state: summarize_cell(cell, state, profile, record),
        cores,
        record=record,
        recorded_fields=(
            "postgresql_version",
            "server_user",
            "pki",
            "server_settings",
            "bulk_table",
            "delay_method",
            "link",
            "target",
        ),
        skipped=record.get("skipped") or None,
    )
