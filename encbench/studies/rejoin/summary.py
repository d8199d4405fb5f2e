"""The rejoin part of summary.json, built from rejoin.jsonl alone (plus rejoin.json, the
study's record of its clusters and of the proofs on the wire): per cell (IST or SST) the
time from node 2's start to Synced, plain cluster against socket.ssl, with the bytes and CPU
beside it."""

from __future__ import annotations

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.cell_summary import GALERA_SETUP
from encbench.report.cells import sample
from encbench.report.models import Record
from encbench.report.study_summary import identity, recorded, study_fields
from encbench.results.schema import primary_metric
from encbench.studies.rejoin import cells as rejoin_cells
from encbench.studies.rejoin.models import RejoinCellSummary, RejoinSummary, RejoinVariant
from encbench.studies.rejoin.options import rejoin_options
from encbench.studies.rejoin.records import RejoinCell, RejoinRecord

PRIMARY = primary_metric(RejoinRecord.METRICS)
MIB = 2**20


def variant_stats(runs: list[RejoinRecord]) -> RejoinVariant:
    return RejoinVariant(
        sync_s=sample(runs, lambda r: r.sync_s),
        link_mib=sample(runs, lambda r: r.link_bytes / MIB),
        node1_cpu_s=sample(runs, lambda r: r.node1_cpu_s),
        node2_cpu_s=sample(runs, lambda r: r.node2_cpu_s),
    )


def summarize_cell(
    cell: RejoinCell, state: stopping_rule.CellRounds, profile: Profile, proof: Record | None
) -> RejoinCellSummary:
    return cells.summarize_cell(
        RejoinCellSummary,
        {**identity(cell), "proof": proof},
        state,
        rejoin_options(profile),
        RejoinRecord.METRICS,
        variant_stats,
    )


def build(
    runs: list[RejoinRecord], profile: Profile, record: Record | None, cores: int = 1
) -> RejoinSummary:
    record = record or {}
    proofs = record.get("proofs") or {}
    return RejoinSummary(
        **recorded(record, GALERA_SETUP),  # as galera_pair_study.describe wrote it
        **study_fields(
            rejoin_cells.cells(profile),
            runs,
            rejoin_options(profile),
            PRIMARY.name,
            lambda cell, state: summarize_cell(cell, state, profile, proofs.get(cell.slug)),
            cores,
        ),
    )
