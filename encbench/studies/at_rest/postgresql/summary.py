"""The PostgreSQL at-rest part of summary.json, built from pg-at-rest.jsonl alone (plus
pg-at-rest.json: the data's size, each regime's memory, the filesystems and their proof)."""

from __future__ import annotations

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import pgbench_part
from encbench.report.models import Record
from encbench.report.study_summary import identity
from encbench.studies.at_rest.postgresql import cells as pg_cells
from encbench.studies.at_rest.postgresql.models import (
    PgAtRestCellSummary,
    PgAtRestSummary,
    PgAtRestVariant,
)
from encbench.studies.at_rest.postgresql.options import pg_at_rest_options
from encbench.studies.at_rest.postgresql.records import PgAtRestCell, PgAtRestRecord

MIB = 2**20


def variant_stats(runs: list[PgAtRestRecord]) -> PgAtRestVariant:
    caches = [r.page_cache_bytes for r in runs]
    checkpoints = [r.checkpoint_s for r in runs if r.checkpoint_s is not None]
    return PgAtRestVariant(
        **pgbench_part.variant_fields(runs),
        page_cache_mib=sum(caches) / len(caches) / MIB,
        page_cache_max_mib=max(caches) / MIB,
        cache_share_of_data=max(r.cache_share_of_data for r in runs),
        memory_limit_mib=max(r.memory_limit_bytes for r in runs) / MIB,
        checkpoint_s=sum(checkpoints) / len(checkpoints) if checkpoints else None,
    )


def summarize_cell(
    cell: PgAtRestCell, state: stopping_rule.CellRounds, profile: Profile
) -> PgAtRestCellSummary:
    return pgbench_part.summarize_cell(
        PgAtRestCellSummary, identity(cell), state, pg_at_rest_options(profile), variant_stats
    )


def build(
    runs: list[PgAtRestRecord], profile: Profile, record: Record | None, cores: int = 1
) -> PgAtRestSummary:
    return pgbench_part.part(
        PgAtRestSummary,
        pg_cells.cells(profile),
        runs,
        pg_at_rest_options(profile),
        lambda cell, state: summarize_cell(cell, state, profile),
        cores,
        record=record or {},
        recorded_fields=(
            "postgresql_version",
            "server_user",
            "data_bytes",
            "regimes",
            "filesystem",
        ),
    )
