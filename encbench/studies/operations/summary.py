"""The operations part of summary.json, built from operations.jsonl alone (plus
operations.json, the study's record of its servers, and crypto.json for the cipher's limit)."""

from __future__ import annotations

from functools import partial

from encbench.capacity.plan import PAGE_BYTES, SERVER_CIPHERS
from encbench.capacity.read import cipher_mb_per_s
from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.cells import sample
from encbench.report.models import Record, Sample
from encbench.report.study_summary import identity, recorded, study_fields
from encbench.results.schema import primary_metric
from encbench.studies.operations import cells as operation_cells
from encbench.studies.operations.models import (
    OperationCellSummary,
    OperationsSummary,
    OperationVariant,
)
from encbench.studies.operations.options import operations_options
from encbench.studies.operations.records import OperationCell, OperationRecord

PRIMARY = primary_metric(OperationRecord.METRICS)
MIB = 2**20
# What operations.json says of its servers (servers.py).
RECORDED = (
    "mariadb_version",
    "encryption",
    "data",
    "buffer_pool_mb",
    "rotation_iops",
    "option_difference",
    "key_rotation",
)


def variant_stats(runs: list[OperationRecord], operation: str) -> OperationVariant:
    extra: dict[str, Sample] = {}
    if operation == "crash-recovery":
        extra["redo_mib"] = sample(runs, lambda r: r.redo_bytes / MIB)
        extra["pages_recovered"] = sample(runs, lambda r: float(r.pages_recovered))
    if operation in ("encrypt-existing", "key-rotation"):
        extra["foreground_tps"] = sample(runs, lambda r: r.foreground_tps)
        if all(r.encryption_s > 0 for r in runs):
            extra["encryption_s"] = sample(runs, lambda r: r.encryption_s)
            extra["encryption_mib_per_s"] = sample(runs, lambda r: r.encryption_mib_per_s)
    if operation in ("backup", "prepare"):
        extra["backup_mib"] = sample(runs, lambda r: r.backup_bytes / MIB)
    return OperationVariant(time=sample(runs, lambda r: r.time), **extra)


def cipher_limit_mib_per_s(crypto: Record | None, algorithm: str) -> float | None:
    """The server's cipher on one core at InnoDB's page size, encrypting (openssl speed, in
    MB/s of 10^6 bytes) as MiB/s."""
    if not crypto or algorithm not in SERVER_CIPHERS:
        return None
    mb = cipher_mb_per_s(crypto, SERVER_CIPHERS[algorithm], PAGE_BYTES, True, 1, "encrypt")
    return mb * 1e6 / MIB if mb else None


def summarize_cell(
    cell: OperationCell,
    state: stopping_rule.CellRounds,
    profile: Profile,
    cipher_limit: float | None,
) -> OperationCellSummary:
    counted = [run for r in state.counted for run in r.runs.values()]
    summary = cells.summarize_cell(
        OperationCellSummary,
        {**identity(cell), "unit": counted[0].time_unit if counted else cell.unit},
        state,
        operations_options(profile),
        (PRIMARY,),
        partial(variant_stats, operation=cell.operation),
    )
    if not counted:
        return summary
    encrypted = [r.runs["encrypted"] for r in state.counted]
    per_thread = None
    if cell.threads and all(r.encryption_s > 0 for r in encrypted):
        per_thread = sample(encrypted, lambda r: r.encryption_mib_per_s / cell.threads)
    return summary.model_copy(
        update={
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
    rule = operations_options(profile)
    limit = cipher_limit_mib_per_s(crypto, profile.server.encryption_algorithm[0])
    return OperationsSummary(
        **recorded(record or {}, RECORDED),
        **study_fields(
            operation_cells.cells(profile),
            runs,
            rule,
            PRIMARY.name,
            lambda cell, state: summarize_cell(cell, state, profile, limit),
            cores,
        ),
        crash_load_s=rule.crash_load_s,
    )
