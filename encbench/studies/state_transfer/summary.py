"""The state-transfer part of summary.json, built from state-transfer.jsonl alone (plus
state-transfer.json, the study's record of its cluster and of the proofs on the wire)."""

from __future__ import annotations

from collections.abc import Callable

from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.models import Estimate, Harness, Pair, Record, Sample, adjust
from encbench.results.schema import SstCell, SstRecord, primary_metric
from encbench.studies.state_transfer import cells as sst_cells
from encbench.studies.state_transfer import limits as sst_limits
from encbench.studies.state_transfer.models import (
    SstCellSummary,
    SstLimit,
    SstVariant,
    StateTransferSummary,
)
from encbench.studies.state_transfer.options import state_transfer_options

PRIMARY = primary_metric(SstRecord.METRICS)
MIB = 2**20


def _sample(runs: list[SstRecord], value: Callable[[SstRecord], float]) -> Sample:
    return Sample.of([value(r) for r in runs])


def variant_stats(runs: list[SstRecord]) -> SstVariant:
    names = sorted({name for r in runs for name in r.stages})
    stages = {
        name: _sample(runs, lambda r, n=name: r.stages.get(n, 0.0))  # type: ignore[misc]
        for name in names
        if all(name in r.stages for r in runs)
    }
    return SstVariant(
        sync_s=_sample(runs, lambda r: r.sync_s),
        transfer_s=_sample(runs, lambda r: r.transfer_s),
        link_mib=_sample(runs, lambda r: r.link_rx_bytes / MIB),
        mib_per_s=_sample(runs, lambda r: r.mib_per_s),
        donor_cpu_s=_sample(runs, lambda r: r.donor_cpu_s),
        joiner_cpu_s=_sample(runs, lambda r: r.joiner_cpu_s),
        stages=stages,
    )


def against_limits(
    cell: SstCell, variant: str, mib_per_s: float, limits: Record, proof: Record | None
) -> SstLimit | None:
    """One variant's mean MiB/s against its lowest measured limit; the encrypted side's
    cipher is the one its proof transfer negotiated (before a proof: the expected one)."""
    suite = str(((proof or {}).get(variant) or {}).get("cipher") or "")
    found = sst_limits.limits_for(limits, cell, variant, suite)
    against = sst_limits.bound(mib_per_s, found)
    if against is None:
        return None
    return SstLimit(
        mib_per_s=mib_per_s,
        limits_mib_per_s=found.mib_per_s,
        resource=against.resource,
        limit_mib_per_s=against.limit_mib_per_s,
        pct_of_limit=against.pct,
        binding=against.binding,
        reading=against.reading,
        cipher=found.cipher,
    )


def summarize_cell(
    cell: SstCell,
    state: plan.CellRounds,
    profile: Profile,
    proof: Record | None,
    limits: Record | None = None,
) -> SstCellSummary:
    rounds = state.counted
    runs = [run for r in rounds for run in r.runs.values()]
    entry = SstCellSummary(
        method=cell.method,
        cipher=cell.cipher,
        backup_threads=cell.backup_threads,
        aesni=cell.aesni,
        label=cell.label,
        rounds=len(rounds),
        rounds_rejected=len(state.rejected),
        measured_s=state.wall_s,
        status="not measured",
        proof=proof,
    )
    if not rounds:
        return entry
    rule = state_transfer_options(profile)
    comparisons = {}
    for m in SstRecord.METRICS:
        if any(getattr(r, m.name) <= 0 for r in runs):
            continue  # a stage the scripts did not log: no ratio to take
        comparisons[m.name] = Estimate.of_cell(state, m, rule)
    timed = sum(r.sync_s for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    variants = Pair[SstVariant](
        plain=variant_stats([r.runs["plain"] for r in rounds]),
        encrypted=variant_stats([r.runs["encrypted"] for r in rounds]),
    )
    # An A/A calibration's B is a plain twin: the plain limits are its own.
    limited_as = {"plain": "plain", "encrypted": "plain" if profile.calibration else "encrypted"}
    against = {
        name: against_limits(cell, limited_as[name], stats.mib_per_s.mean, limits or {}, proof)
        for name, stats in (("plain", variants.plain), ("encrypted", variants.encrypted))
    }
    return entry.model_copy(
        update={
            "status": plan.stop_reason(state, rule, PRIMARY.name)
            or "incomplete (run stopped before the cell finished)",
            "variants": variants,
            "limits": {name: found for name, found in against.items() if found is not None},
            "comparisons": comparisons,
            "other_load_pct_of_core": 100.0 * other / timed if timed > 0 else 0.0,
        }
    )


def build(
    runs: list[SstRecord], profile: Profile, record: Record | None, cores: int = 1
) -> StateTransferSummary:
    record = record or {}
    rule = state_transfer_options(profile)
    proofs = record.get("proofs") or {}
    limits = record.get("limits")
    cells, differences = adjust(
        [
            summarize_cell(
                cell, plan.cell_rounds(runs, cell, rule), profile, proofs.get(cell.slug), limits
            )
            for cell in sst_cells.cells(profile)
        ],
        PRIMARY.name,
        rule.equivalence_margin_pct,
        rule.interference_max_pct,
    )
    return StateTransferSummary(
        target_halfwidth_pct=rule.target_halfwidth_pct,
        mariadb_version=record.get("mariadb_version"),
        galera_version=record.get("galera_version"),
        data=record.get("data"),
        link=record.get("link"),
        key_type=record.get("key_type"),
        certificate=record.get("certificate"),
        harness=Harness.of(sum(r.harness_cpu_s for r in runs), sum(r.sync_s for r in runs), cores),
        cells=cells,
        differences=differences,
        limits=limits,
        pipelines=record.get("pipelines"),
        nodes=record.get("nodes"),
    )
