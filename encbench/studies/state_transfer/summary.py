"""The state-transfer part of summary.json, built from state-transfer.jsonl alone (plus
state-transfer.json, the study's record of its cluster and of the proofs on the wire)."""

from __future__ import annotations

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.cell_summary import GALERA_SETUP
from encbench.report.cells import sample
from encbench.report.models import Record, Sample
from encbench.report.study_summary import identity, recorded, study_fields
from encbench.results.schema import primary_metric
from encbench.studies.state_transfer import cells as sst_cells
from encbench.studies.state_transfer import limits as sst_limits
from encbench.studies.state_transfer.models import (
    SstCellSummary,
    SstLimit,
    SstVariant,
    StateTransferSummary,
)
from encbench.studies.state_transfer.options import state_transfer_options
from encbench.studies.state_transfer.records import SstCell, SstRecord

PRIMARY = primary_metric(SstRecord.METRICS)
# What state-transfer.json says of the cluster, its limits and its pipelines (cluster.py).
RECORDED = (
    *GALERA_SETUP,
    "limits",
    "pipelines",
    "nodes",
    "donor_load",
    "at_rest",
)
MIB = 2**20


OPTIONAL_FIGURES = (
    "sync_less_pause_s",
    "donor_tps_before",
    "donor_tps_during",
    "donor_p95_before_ms",
    "donor_p95_during_ms",
)


def optional_sample(runs: list[SstRecord], name: str) -> Sample | None:
    """A figure only some cells have (mariabackup's pause, a loaded donor's service): its
    sample where every run has it, else None."""
    values = [getattr(r, name) for r in runs]
    if not values or any(v is None for v in values):
        return None
    return Sample.of([float(v) for v in values])


def variant_stats(runs: list[SstRecord]) -> SstVariant:
    names = sorted({name for r in runs for name in r.stages})
    stages = {
        name: sample(runs, lambda r, n=name: r.stages.get(n, 0.0))  # type: ignore[misc]
        for name in names
        if all(name in r.stages for r in runs)
    }
    return SstVariant(
        sync_s=sample(runs, lambda r: r.sync_s),
        transfer_s=sample(runs, lambda r: r.transfer_s),
        link_mib=sample(runs, lambda r: r.link_rx_bytes / MIB),
        mib_per_s=sample(runs, lambda r: r.mib_per_s),
        donor_cpu_s=sample(runs, lambda r: r.donor_cpu_s),
        joiner_cpu_s=sample(runs, lambda r: r.joiner_cpu_s),
        stages=stages,
        **{name: optional_sample(runs, name) for name in OPTIONAL_FIGURES},
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
    state: stopping_rule.CellRounds,
    profile: Profile,
    proof: Record | None,
    limits: Record | None = None,
) -> SstCellSummary:
    summary = cells.summarize_cell(
        SstCellSummary,
        {**identity(cell), "proof": proof},
        state,
        state_transfer_options(profile).for_cell(cell),
        SstRecord.METRICS,
        variant_stats,
    )
    variants = summary.variants
    if variants is None:
        return summary
    # An A/A calibration's B is a plain twin: the plain limits are its own.
    limited_as = {"plain": "plain", "encrypted": "plain" if profile.calibration else "encrypted"}
    against = {
        name: against_limits(cell, limited_as[name], stats.mib_per_s.mean, limits or {}, proof)
        for name, stats in (("plain", variants.plain), ("encrypted", variants.encrypted))
    }
    return summary.model_copy(
        update={"limits": {name: found for name, found in against.items() if found is not None}}
    )


def build(
    runs: list[SstRecord], profile: Profile, record: Record | None, cores: int = 1
) -> StateTransferSummary:
    record = record or {}
    proofs = record.get("proofs") or {}
    limits = record.get("limits")
    return StateTransferSummary(
        **recorded(record, RECORDED),
        **study_fields(
            sst_cells.cells(profile),
            runs,
            state_transfer_options(profile),
            PRIMARY.name,
            lambda cell, state: summarize_cell(cell, state, profile, proofs.get(cell.slug), limits),
            cores,
        ),
    )
