"""The operations part of summary.json, built from operations.jsonl alone (plus
operations.json, the study's record of its servers, and crypto.json for the cipher's limit)."""

from __future__ import annotations

from collections.abc import Callable

from encbench.capacity.plan import PAGE_BYTES, SERVER_CIPHERS
from encbench.capacity.read import cipher_mb_per_s
from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.models import Estimate, Harness, Pair, Record, Sample, adjust
from encbench.results.schema import OperationCell, OperationRecord, primary_metric
from encbench.studies.operations import cells as operation_cells
from encbench.studies.operations.models import (
    OperationCellSummary,
    OperationsSummary,
    OperationVariant,
)
from encbench.studies.operations.options import operations_options

PRIMARY = primary_metric(OperationRecord.METRICS)
MIB = 2**20


def _sample(runs: list[OperationRecord], value: Callable[[OperationRecord], float]) -> Sample:
    return Sample.of([value(r) for r in runs])


def variant_stats(runs: list[OperationRecord], operation: str) -> OperationVariant:
    extra: dict[str, Sample] = {}
    if operation == "crash-recovery":
        extra["redo_mib"] = _sample(runs, lambda r: r.redo_bytes / MIB)
        extra["pages_recovered"] = _sample(runs, lambda r: float(r.pages_recovered))
    if operation in ("encrypt-existing", "key-rotation"):
        extra["foreground_tps"] = _sample(runs, lambda r: r.foreground_tps)
        if all(r.encryption_s > 0 for r in runs):
            extra["encryption_s"] = _sample(runs, lambda r: r.encryption_s)
            extra["encryption_mib_per_s"] = _sample(runs, lambda r: r.encryption_mib_per_s)
    if operation in ("backup", "prepare"):
        extra["backup_mib"] = _sample(runs, lambda r: r.backup_bytes / MIB)
    return OperationVariant(time=_sample(runs, lambda r: r.time), **extra)


def cipher_limit_mib_per_s(crypto: Record | None, algorithm: str) -> float | None:
    """The server's cipher on one core at InnoDB's page size, encrypting (openssl speed, in
    MB/s of 10^6 bytes) as MiB/s."""
    if not crypto or algorithm not in SERVER_CIPHERS:
        return None
    mb = cipher_mb_per_s(crypto, SERVER_CIPHERS[algorithm], PAGE_BYTES, True, 1, "encrypt")
    return mb * 1e6 / MIB if mb else None


def summarize_cell(
    cell: OperationCell,
    state: plan.CellRounds,
    profile: Profile,
    cipher_limit: float | None,
) -> OperationCellSummary:
    rounds = state.counted
    runs = [run for r in rounds for run in r.runs.values()]
    entry = OperationCellSummary(
        operation=cell.operation,
        threads=cell.threads,
        label=cell.label,
        unit=runs[0].time_unit if runs else cell.unit,
        rounds=len(rounds),
        rounds_rejected=len(state.rejected),
        measured_s=state.wall_s,
        status="not measured",
    )
    if not rounds:
        return entry
    rule = operations_options(profile)
    m = PRIMARY
    comparison = Estimate.of_cell(state, m, rule)
    encrypted = [r.runs["encrypted"] for r in rounds]
    per_thread = None
    if cell.threads and all(r.encryption_s > 0 for r in encrypted):
        per_thread = _sample(encrypted, lambda r: r.encryption_mib_per_s / cell.threads)
    timed = sum(r.timed_s for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    return entry.model_copy(
        update={
            "status": plan.stop_reason(state, rule, m.name)
            or "incomplete (run stopped before the cell finished)",
            "variants": Pair[OperationVariant](
                plain=variant_stats([r.runs["plain"] for r in rounds], cell.operation),
                encrypted=variant_stats(encrypted, cell.operation),
            ),
            "comparisons": {m.name: comparison},
            "other_load_pct_of_core": 100.0 * other / timed if timed > 0 else 0.0,
            "mib_per_s_per_thread": per_thread,
            "cipher_mib_per_s_per_core": cipher_limit if cell.threads else None,
        }
    )


def build(
    runs: list[OperationRecord],
    profile: Profile,
    record: Record | None,
    crypto: Record | None,
    cores: int = 1,
) -> OperationsSummary:
    record = record or {}
    rule = operations_options(profile)
    limit = cipher_limit_mib_per_s(crypto, profile.server.encryption_algorithm[0])
    cells, differences = adjust(
        [
            summarize_cell(cell, plan.cell_rounds(runs, cell, rule), profile, limit)
            for cell in operation_cells.cells(profile)
        ],
        PRIMARY.name,
        rule.equivalence_margin_pct,
        rule.interference_max_pct,
    )
    return OperationsSummary(
        target_halfwidth_pct=rule.target_halfwidth_pct,
        mariadb_version=record.get("mariadb_version"),
        encryption=record.get("encryption"),
        data=record.get("data"),
        buffer_pool_mb=record.get("buffer_pool_mb"),
        rotation_iops=record.get("rotation_iops"),
        option_difference=record.get("option_difference"),
        key_rotation=record.get("key_rotation"),
        harness=Harness.of(sum(r.harness_cpu_s for r in runs), sum(r.timed_s for r in runs), cores),
        cells=cells,
        differences=differences,
        crash_load_s=operations_options(profile).crash_load_s,
    )
