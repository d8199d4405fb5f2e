"""The studies encbench runs, each only its own parts (engine/study.py), registered by the
name a profile's `studies` list uses.  A new study is a package here plus one entry below:
how to build it, and what disk and memory it needs (checked before anything starts)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from encbench.engine.progress import RunProgress
from encbench.engine.study import Study
from encbench.errors import BadInput
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.studies.at_rest import pair
from encbench.studies.at_rest.study import AtRestStudy
from encbench.studies.in_transit import sizing as in_transit
from encbench.studies.in_transit.study import TransitStudy
from encbench.studies.operations import servers as operations
from encbench.studies.operations.study import OperationsStudy
from encbench.studies.replication import sizing as replication
from encbench.studies.replication.rejoin import RejoinStudy
from encbench.studies.replication.study import ReplicationStudy
from encbench.studies.state_transfer import sizing as state_transfer
from encbench.studies.state_transfer.study import StateTransferStudy

MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class Entry:
    make: Callable[[ResultStore, Profile, RunProgress], Study]
    disk_bytes: Callable[[Profile], int]
    # MB the study's servers hold at once, and what they are and how to need less.
    memory_mb: Callable[[Profile], tuple[int, str]]


# In the order they run: at rest first (its servers' CPU flags and cipher speed describe the
# machine for the whole report).
STUDIES: dict[str, Entry] = {
    "at-rest": Entry(AtRestStudy, pair.disk_bytes, pair.memory_mb),
    "in-transit": Entry(TransitStudy, in_transit.disk_bytes, in_transit.memory_mb),
    "operations": Entry(OperationsStudy, operations.estimated_disk_bytes, operations.memory_mb),
    "state-transfer": Entry(
        StateTransferStudy, state_transfer.disk_bytes, state_transfer.memory_mb
    ),
    "replication": Entry(ReplicationStudy, replication.disk_bytes, replication.memory_mb),
    "rejoin": Entry(RejoinStudy, replication.disk_bytes, replication.memory_mb),
}


# The studies that can measure a server encbench did not start ([target]); the others are
# skipped with a line (cli.py) rather than measure a sandbox in the target's place.
TARGET_STUDIES = frozenset({"at-rest", "in-transit"})


def skipped_for_target(profile: Profile) -> list[str]:
    if profile.target is None:
        return []
    return [name for name in profile.studies if name not in TARGET_STUDIES]


TARGET_WHY = (
    "against a target only at rest and in transit are measured (operations restart and kill "
    "the server, which is not encbench's)"
)


def left_out(profile: Profile, unavailable: Mapping[str, str]) -> dict[str, str]:
    """The profile's studies this run leaves out, each with why: those a target cannot take,
    and the optional ones this machine cannot run (preflight.unavailable_studies)."""
    out = {name: why for name, why in unavailable.items() if name in profile.studies}
    # A target's reason wins: installing what a study lacks would not bring it back.
    return out | {name: TARGET_WHY for name in skipped_for_target(profile)}


def _entries(profile: Profile) -> list[tuple[str, Entry]]:
    skip = skipped_for_target(profile)
    return [
        (name, e) for name, e in STUDIES.items() if name in profile.studies and name not in skip
    ]


def build_studies(store: ResultStore, profile: Profile, progress: RunProgress) -> list[Study]:
    return [e.make(store, profile, progress) for _, e in _entries(profile)]


def check_disk(path: Path, profile: Profile) -> None:
    """Refuse a data set that cannot fit, before anything is created or loaded."""
    need = sum(e.disk_bytes(profile) for _, e in _entries(profile))
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if free < need * 1.2:
        raise BadInput(
            f"not enough disk at {path}: the data set needs about {need / 2**30:.1f} GiB "
            f"and {free / 2**30:.1f} GiB is free; choose another --out or a smaller data size"
        )


def without_room(path: Path, profile: Profile) -> dict[str, str]:
    """The profile's optional studies that this machine has no disk or memory for, each with
    the refusal it would have met: left out like one that lacks a tool.  A run that does not
    fit without them is refused as before, by check_disk and check_memory."""
    out: dict[str, str] = {}
    optional = [
        n for n in profile.studies if n == "state-transfer" and profile.state_transfer.optional
    ]
    for name in optional:
        alone = profile.model_copy(update={"studies": [name]})
        try:
            check_disk(path, alone)
            check_memory(alone)
        except BadInput as exc:
            out[name] = str(exc)
    return out


def available_mb(meminfo: str) -> float | None:
    """MemAvailable of /proc/meminfo in MB: what can be allocated without swapping."""
    found = re.search(r"^MemAvailable:\s+(\d+) kB", meminfo, re.M)
    return int(found[1]) / 1024 if found else None


def check_memory(profile: Profile, meminfo: str | None = None) -> None:
    """Refuse servers that do not fit in the memory available now: they would swap, and an
    in-memory regime would measure the disk it claims to avoid.  Studies run one after the
    other, so each must fit on its own."""
    if meminfo is None:
        try:
            meminfo = MEMINFO.read_text()
        except OSError:
            return  # not Linux: nothing to check against
    free = available_mb(meminfo)
    if free is None:
        return
    for name, entry in _entries(profile):
        need, what = entry.memory_mb(profile)
        if need > free:
            raise BadInput(
                f"{name}: the servers need about {need:,} MB and {free:,.0f} MB of memory is "
                f"available ({what})"
            )
