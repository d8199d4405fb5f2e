"""The operations study's records of measured runs and the metrics it compares.

operations.jsonl, schema OPERATIONS_SCHEMA:
  1 — first version: one line per timed operation of one variant in one round.  Later,
      with defaults (older lines read as before): the key-rotation cell's key_version_from,
      key_version and tables_at_key_version.
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results import schema
from encbench.results.schema import TIME_WORDS, Metric, RecordedRun, record

OPERATIONS_SCHEMA = 1

# What an operation's `time` measures, per operation: seconds of the operation itself, except
# for encrypting existing data, whose paired cost is the foreground load's time per transaction
# (see OperationRecord).
OPERATION_UNITS = {"encrypt-existing": "ms/txn", "key-rotation": "ms/txn"}
OPERATIONS_METRICS = (
    Metric(
        "time", "s or ms/txn (time_unit)", "lower_is_better", primary=True, more_less=TIME_WORDS
    ),
)


@record
class OperationCell:
    """One row of the operations table: an operation, with its encryption threads where it
    has them (encrypting existing data; 0 for every other operation)."""

    operation: str  # startup | crash-recovery | encrypt-existing | key-rotation | backup | prepare
    threads: int = 0

    @property
    def label(self) -> str:
        title = OPERATION_TITLES.get(self.operation, self.operation)
        if self.threads:
            return f"{title}, {self.threads} encryption thread{'s' if self.threads > 1 else ''}"
        return title

    @property
    def slug(self) -> str:
        return f"{self.operation}-t{self.threads}" if self.threads else self.operation

    @property
    def unit(self) -> str:
        return OPERATION_UNITS.get(self.operation, "s")


OPERATION_TITLES = {
    "startup": "start-up",
    "crash-recovery": "crash recovery",
    "encrypt-existing": "encrypting existing data",
    "key-rotation": "key rotation",
    "backup": "mariadb-backup --backup",
    "prepare": "mariadb-backup --prepare",
}


@record
class OperationRecord(RecordedRun):
    """One timed operation of one variant in one round of an operations cell.

    `time` is what the pair compares (lower is better): the operation's seconds (start-up and
    crash recovery until the server answers `SELECT 1`, a backup, a prepare).  Encrypting
    existing data has no plain counterpart that does the same work, so its pair is the
    foreground load: the same sysbench read/write run on the same server with the background
    encryption running (`encrypted`) or not (`plain`), and `time` is that load's milliseconds
    per transaction (1000 / TPS); the encryption's own time and rate are recorded beside it
    (`encryption_s`, `encrypted_bytes`), encrypted side only.  Key rotation is paired the same
    way: `encrypted` is the run whose window re-encrypts every page with a new key version,
    `plain` the same load on the same encrypted tables with no rotation; `encryption_s` and
    `encrypted_bytes` are then the re-encryption's, and the key versions prove it."""

    STUDY: ClassVar[str] = "operations"
    SCHEMA: ClassVar[int] = OPERATIONS_SCHEMA
    CELL: ClassVar[type[Any]] = OperationCell
    FIGURES: ClassVar[tuple[str, ...]] = ("encryption_mib_per_s",)
    METRICS: ClassVar[tuple[Metric, ...]] = OPERATIONS_METRICS

    cell: OperationCell
    # round … wall_s: RecordedRun's (wall_s: the whole run, its untimed set-up included, as
    # the cell's budget is real time); then this study's own
    time: float  # in time_unit: the paired metric
    time_unit: str
    timed_s: float  # the measured window: the operation, or the foreground load
    # The per-run proof: sysbench tables encrypted per the server (INNODB_TABLESPACES_ENCRYPTION)
    # right after the operation, and how many there are.
    tables_encrypted: int
    tables: int
    # crash recovery: InnoDB's error log, checkpoint LSN to end of log, and pages to recover
    redo_bytes: int = 0
    pages_recovered: int = 0
    # encrypting existing data: the foreground load, and the encryption (encrypted side)
    foreground_tps: float = 0.0
    foreground_transactions: int = 0
    encryption_s: float = 0.0
    encrypted_bytes: int = 0
    # key rotation: the key plugin's version before and after the window, and the tables whose
    # every page is at that version afterwards (the per-run proof)
    key_version_from: int = 0
    key_version: int = 0
    tables_at_key_version: int = 0
    # backup: the bytes mariadb-backup wrote
    backup_bytes: int = 0
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.time <= 0 or self.timed_s <= 0:
            raise self.impossible(f"{self.time:g} {self.time_unit} in {self.timed_s:.3f} s")

    def timed_window_s(self) -> float:
        return self.timed_s

    @property
    def encryption_mib_per_s(self) -> float:
        """The background encryption's rate over the tablespaces it encrypted (0: none)."""
        return schema.mib_per_s(self.encrypted_bytes, self.encryption_s)
