"""The operations study's part of summary.json, as typed models (built in summary.py)."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary, StudyPart
from encbench.report.models import Model, Record, Sample


class OperationVariant(Model):
    time: Sample  # in the cell's unit
    redo_mib: Sample | None = None  # crash recovery: redo applied
    pages_recovered: Sample | None = None
    foreground_tps: Sample | None = None  # encrypting existing data
    encryption_s: Sample | None = None
    encryption_mib_per_s: Sample | None = None
    backup_mib: Sample | None = None


class OperationCellSummary(CellSummary[OperationVariant]):
    rounds_rejected: int  # always written by this study: required (in its place above)
    operation: str
    threads: int
    unit: str
    # encrypting existing data: the rate per encryption thread against the cipher's own rate
    # on one core (openssl speed of the server's cipher at 16 KiB, crypto.json), in MiB/s
    mib_per_s_per_thread: Sample | None = None
    cipher_mib_per_s_per_core: float | None = None


class OperationsSummary(StudyPart[OperationCellSummary]):
    mariadb_version: str | None
    encryption: Record | None
    data: Record | None
    buffer_pool_mb: int | None
    rotation_iops: int | None
    option_difference: Record | None
    key_rotation: Record | None
    # Seconds of write load before each crash (profile operations.crash_load_s), for the
    # report's words; 0 in a summary from before it was written.
    crash_load_s: int = 0
