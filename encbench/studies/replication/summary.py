"""The replication part of summary.json, built from replication.jsonl alone (plus
replication.json, the study's record of its clusters and of the proofs on the wire)."""

from __future__ import annotations

from collections.abc import Callable

from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.models import Estimate, Harness, Pair, Record, Sample, adjust
from encbench.results.schema import ReplicationCell, ReplicationRecord, primary_metric
from encbench.studies.replication import cells as replication_cells
from encbench.studies.replication.models import (
    ReplicationCellSummary,
    ReplicationSummary,
    ReplicationVariant,
)
from encbench.studies.replication.options import replication_options

PRIMARY = primary_metric(ReplicationRecord.METRICS)


def _sample(runs: list[ReplicationRecord], value: Callable[[ReplicationRecord], float]) -> Sample:
    return Sample.of([value(r) for r in runs])


def variant_stats(runs: list[ReplicationRecord]) -> ReplicationVariant:
    return ReplicationVariant(
        tps=_sample(runs, lambda r: r.tps),
        latency_avg_ms=_sample(runs, lambda r: r.latency_avg_ms),
        latency_p95_ms=_sample(runs, lambda r: r.latency_p95_ms),
        link_bytes_per_txn=_sample(runs, lambda r: r.link_bytes_per_txn),
        cpu_ms_per_txn=_sample(runs, lambda r: r.cpu_ms_per_txn),
        node1_cpu_ms_per_txn=_sample(runs, lambda r: r.node1_cpu_s * 1000 / r.transactions),
        node2_cpu_ms_per_txn=_sample(runs, lambda r: r.node2_cpu_s * 1000 / r.transactions),
        apply_wait_s=_sample(runs, lambda r: r.apply_wait_s),
    )


def summarize_cell(
    cell: ReplicationCell, state: plan.CellRounds, profile: Profile, proof: Record | None
) -> ReplicationCellSummary:
    rounds = state.counted
    runs = [run for r in rounds for run in r.runs.values()]
    entry = ReplicationCellSummary(
        workload=cell.workload,
        threads=cell.threads,
        label=cell.label,
        rounds=len(rounds),
        rounds_rejected=len(state.rejected),
        measured_s=state.wall_s,
        status="not measured",
        proof=proof,
    )
    if not rounds:
        return entry
    rule = replication_options(profile)
    comparisons = {m.name: Estimate.of_cell(state, m, rule) for m in ReplicationRecord.METRICS}
    timed = sum(r.wall_s for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    return entry.model_copy(
        update={
            "status": plan.stop_reason(state, rule, PRIMARY.name)
            or "incomplete (run stopped before the cell finished)",
            "variants": Pair[ReplicationVariant](
                plain=variant_stats([r.runs["plain"] for r in rounds]),
                encrypted=variant_stats([r.runs["encrypted"] for r in rounds]),
            ),
            "comparisons": comparisons,
            "other_load_pct_of_core": 100.0 * other / timed if timed > 0 else 0.0,
        }
    )


def build(
    runs: list[ReplicationRecord], profile: Profile, record: Record | None, cores: int = 1
) -> ReplicationSummary:
    record = record or {}
    rule = replication_options(profile)
    proofs = record.get("proofs") or {}
    cells, differences = adjust(
        [
            summarize_cell(cell, plan.cell_rounds(runs, cell, rule), profile, proofs.get(cell.slug))
            for cell in replication_cells.cells(profile)
        ],
        PRIMARY.name,
        rule.equivalence_margin_pct,
        rule.interference_max_pct,
    )
    return ReplicationSummary(
        target_halfwidth_pct=rule.target_halfwidth_pct,
        mariadb_version=record.get("mariadb_version"),
        galera_version=record.get("galera_version"),
        data=record.get("data"),
        link=record.get("link"),
        key_type=record.get("key_type"),
        certificate=record.get("certificate"),
        harness=Harness.of(sum(r.harness_cpu_s for r in runs), sum(r.wall_s for r in runs), cores),
        cells=cells,
        differences=differences,
    )
