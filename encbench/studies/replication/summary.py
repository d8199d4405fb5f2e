"""The replication part of summary.json, built from replication.jsonl alone (plus
replication.json, the study's record of its clusters and of the proofs on the wire)."""

from __future__ import annotations

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.cell_summary import GALERA_SETUP
from encbench.report.cells import sample
from encbench.report.models import Record
from encbench.report.study_summary import identity, recorded, study_fields
from encbench.results.schema import primary_metric
from encbench.studies.replication import cells as replication_cells
from encbench.studies.replication.models import (
    ReplicationCellSummary,
    ReplicationSummary,
    ReplicationVariant,
)
from encbench.studies.replication.options import replication_options
from encbench.studies.replication.records import ReplicationCell, ReplicationRecord

PRIMARY = primary_metric(ReplicationRecord.METRICS)


def variant_stats(runs: list[ReplicationRecord]) -> ReplicationVariant:
    return ReplicationVariant(
        tps=sample(runs, lambda r: r.tps),
        latency_avg_ms=sample(runs, lambda r: r.latency_avg_ms),
        latency_p95_ms=sample(runs, lambda r: r.latency_p95_ms),
        link_bytes_per_txn=sample(runs, lambda r: r.link_bytes_per_txn),
        cpu_ms_per_txn=sample(runs, lambda r: r.cpu_ms_per_txn),
        node1_cpu_ms_per_txn=sample(runs, lambda r: r.node1_cpu_s * 1000 / r.transactions),
        node2_cpu_ms_per_txn=sample(runs, lambda r: r.node2_cpu_s * 1000 / r.transactions),
        apply_wait_s=sample(runs, lambda r: r.apply_wait_s),
    )


def summarize_cell(
    cell: ReplicationCell, state: stopping_rule.CellRounds, profile: Profile, proof: Record | None
) -> ReplicationCellSummary:
    return cells.summarize_cell(
        ReplicationCellSummary,
        {**identity(cell), "proof": proof},
        state,
        replication_options(profile),
        ReplicationRecord.METRICS,
        variant_stats,
    )


def build(
    runs: list[ReplicationRecord], profile: Profile, record: Record | None, cores: int = 1
) -> ReplicationSummary:
    record = record or {}
    proofs = record.get("proofs") or {}
    return ReplicationSummary(
        **recorded(record, GALERA_SETUP),  # as galera_pair_study.describe wrote it
        **study_fields(
            replication_cells.cells(profile),
            runs,
            replication_options(profile),
            PRIMARY.name,
            lambda cell, state: summarize_cell(cell, state, profile, proofs.get(cell.slug)),
            cores,
        ),
    )
