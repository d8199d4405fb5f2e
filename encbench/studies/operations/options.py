"""The operations study's section of the profile (`[operations]`)."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field

from encbench.profiles.options import (
    MAX_CLIENT_THREADS,
    CellBudget,
    Rounds,
    RunSeconds,
    WarmupSeconds,
    counts_within,
    known,
)
from encbench.profiles.profile import Profile
from encbench.studies.definition import Settings
from encbench.studies.operations.records import OperationRecord

SECTION = "operations"
Operation = Literal[
    "startup", "crash-recovery", "encrypt-existing", "key-rotation", "backup", "prepare"
]
# innodb_encryption_threads takes 0 to 255; 0 would never encrypt anything.
MAX_ENCRYPTION_THREADS = 255


class OperationsSpec(Rounds):
    """The operations study: timed operations of a plain and an encrypted server with the
    profile's data (studies/operations/)."""

    operations: Annotated[
        list[str], Field(min_length=1), known(get_args(Operation), "operation")
    ] = [
        "startup",
        "crash-recovery",
        "encrypt-existing",
        "backup",
        "prepare",
    ]
    # innodb_encryption_threads while existing tables are encrypted: one cell each.
    encryption_threads: Annotated[
        list[int],
        Field(min_length=1),
        counts_within(
            MAX_ENCRYPTION_THREADS,
            "encryption threads",
            f"innodb_encryption_threads takes 1 to {MAX_ENCRYPTION_THREADS} (0 would never "
            "encrypt); ",
        ),
    ] = [1, 2, 4]
    # The background encryption's page budget (innodb_encryption_rotation_iops).  MariaDB's
    # default, 100 pages/s, would measure that throttle (1.6 MiB/s) rather than the cipher.
    rotation_iops: Annotated[int, Field(ge=1, le=1_000_000_000)] = 100_000
    # sysbench threads of the write load before a crash and of the foreground load while
    # existing tables are encrypted.
    load_threads: Annotated[int, Field(gt=0, le=MAX_CLIENT_THREADS)] = 4
    crash_load_s: Annotated[int, Field(ge=1, le=3600)] = 5
    # The plain side's window of the foreground load (the encrypted side's is the encryption
    # pass): about as long as that pass, so that both rates cover like stretches of load.
    foreground_s: Annotated[int, Field(ge=1, le=3600)] = 2
    # An operation takes what it takes: no warm-up, and run_s is only the ETA's estimate.
    warmup_s: WarmupSeconds = 0
    run_s: RunSeconds = 5
    cell_budget_s: CellBudget = 150


def operations_options(profile: Profile) -> OperationsSpec:
    return profile.section(SECTION, OperationsSpec)


def problem(profile: Profile) -> str | None:
    """What the study cannot be combined with in the rest of the profile, when listed."""
    if OperationRecord.STUDY not in profile.studies:
        return None
    if len(profile.server.encryption_algorithm) > 1 or len(profile.server.encryption_scope) > 1:
        return (
            "the operations study times one encryption configuration, and "
            "server.encryption_algorithm or server.encryption_scope lists several: list one, "
            "or measure the operations in a profile of their own"
        )
    if profile.server.encryption_layer != ["tde"]:
        return (
            "the operations study times InnoDB's own encryption, and server.encryption_layer "
            'names the filesystem: give "tde" (the default), or measure the operations in a '
            "profile of their own"
        )
    if profile.calibration:
        # Its twin would still be an encrypted server: no A/A of operations exists yet.
        return (
            'the operations study has no A/A calibration; remove "operations" '
            "from studies to calibrate, or measure it with `encbench run`"
        )
    return None


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=OperationsSpec, rule=operations_options, validate=problem)
