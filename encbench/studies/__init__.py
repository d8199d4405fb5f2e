"""The studies encbench runs, each a package whose face is its StudyDefinition (`STUDY`,
studies/definition.py), listed once below in the order they run.  A new study is its
package and one line in STUDIES; everything else — the engine, `plan`, `doctor`, the checks
before a run, the report, `compare`, `calibrate` — reads the definitions."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from encbench.engine.progress import RunProgress
from encbench.engine.study import Study
from encbench.errors import BadInput
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile, register_studies
from encbench.results.store import ResultStore, register_record_types
from encbench.servers.grants import NOTHING, TargetNeeds
from encbench.studies import (
    at_rest,
    in_transit,
    operations,
    rejoin,
    replication,
    state_transfer,
)
from encbench.studies.definition import StudyDefinition

MEMINFO = Path("/proc/meminfo")

# In the order they run: at rest first (its servers' CPU flags and cipher speed describe the
# machine for the whole report), which is also what a profile that lists none measures.
STUDIES: tuple[StudyDefinition, ...] = (
    at_rest.STUDY,
    in_transit.STUDY,
    operations.STUDY,
    state_transfer.STUDY,
    replication.STUDY,
    rejoin.STUDY,
)
register_studies(STUDIES)


def reported() -> list[StudyDefinition]:
    """What the report and `compare` read: each study (its own part of summary.json)."""
    return list(STUDIES)


register_record_types([s.record for s in reported()])


def former_names() -> set[str]:
    """The names under which studies' further kinds were studies of their own (their
    results files and summary.json parts, written before)."""
    return {o.name for s in STUDIES for o in s.other_kinds}


def named(profile: Profile) -> list[StudyDefinition]:
    """The profile's studies, in the order they run."""
    return [s for s in STUDIES if s.name in profile.studies]


def measures_target(s: StudyDefinition, profile: Profile) -> bool:
    """Whether the study measures the profile's target: it takes one, of its own kind."""
    return profile.target is not None and s.target is not None and bool(s.kinds_in(profile))


def skipped_for_target(profile: Profile) -> list[str]:
    if profile.target is None:
        return []
    return [s.name for s in named(profile) if not measures_target(s, profile)]


def target_needs(profile: Profile) -> TargetNeeds:
    """What the profile's studies that take a target need of its login and plugins."""
    found = NOTHING
    for s in named(profile):
        use = s.target_use(profile)
        if use is not None and measures_target(s, profile):
            found |= use.needs(profile)
    return found


def target_why(study: StudyDefinition | None = None, profile: Profile | None = None) -> str:
    target = profile.target if profile is not None else None
    if study is not None and profile is not None and target is not None:
        kinds = study.target_kinds(profile) or study.target_takes()
        if target.kind not in kinds:
            return f"it measures {' and '.join(kinds)}, and the target is {target.kind}"
    takes = " and ".join(s.name.replace("-", " ") for s in STUDIES if s.target is not None)
    return (
        f"against a target only {takes} are measured (the other studies restart, crash or "
        "cluster the servers they measure, which a target's is not encbench's to do)"
    )


def left_out(profile: Profile, unavailable: Mapping[str, str]) -> dict[str, str]:
    """The profile's studies this run leaves out, each with why: those a target cannot take,
    and the optional ones this machine cannot run (unavailable_studies)."""
    out = {name: why for name, why in unavailable.items() if name in profile.studies}
    # A target's reason wins: installing what a study lacks would not bring it back.
    by_name = {s.name: s for s in STUDIES}
    return out | {name: target_why(by_name[name], profile) for name in skipped_for_target(profile)}


def needs(profile: Profile) -> list[Check]:
    """What the profile's studies need of this machine, each check once."""
    found: dict[str, Check] = {}
    for s in named(profile):
        for check in s.machine_needs(profile):
            found.setdefault(check.name, check)
    return list(found.values())


def unavailable_studies(profile: Profile) -> dict[str, str]:
    """The profile's optional studies that this machine cannot run, each with what it lacks
    and the fix: they are left out of the run (and named in its report), not refused."""
    out = {}
    for s in named(profile):
        if s.here.optional(profile):
            missing = [c for c in s.machine_needs(profile) if not c.ok]
            if missing:
                out[s.name] = "; ".join(c.problem() for c in missing)
    return out


def _entries(profile: Profile) -> list[StudyDefinition]:
    skip = skipped_for_target(profile)
    return [s for s in named(profile) if s.name not in skip]


def build_studies(store: ResultStore, profile: Profile, progress: RunProgress) -> list[Study]:
    return [r for s in _entries(profile) for r in s.runners(store, profile, progress)]


def check_out(path: Path, profile: Profile) -> None:
    """What the profile's studies need of the results directory, before it is created."""
    for s in _entries(profile):
        s.here.results_dir(profile, path)


def check_disk(path: Path, profile: Profile) -> None:
    """Refuse a data set that cannot fit, before anything is created or loaded."""
    need = sum(s.here.disk_bytes(profile) for s in _entries(profile))
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
    optional = [s.name for s in named(profile) if s.here.optional(profile)]
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
    for study in _entries(profile):
        need, what = study.here.memory_mb(profile)
        if need > free:
            raise BadInput(
                f"{study.name}: the servers need about {need:,} MB and {free:,.0f} MB of memory is "
                f"available ({what})"
            )
