"""The studies encbench runs, each only its own parts (engine/study.py), registered by the
name a profile's `studies` list uses.  A new study is a package here plus one line below."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from encbench.engine.progress import RunProgress
from encbench.engine.study import Study
from encbench.errors import BadInput
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.studies.at_rest import pair
from encbench.studies.at_rest.study import AtRestStudy
from encbench.studies.in_transit import study as in_transit
from encbench.studies.in_transit.study import TransitStudy

Factory = Callable[[ResultStore, Profile, RunProgress], Study]

# In the order they run: at rest first (its servers' CPU flags and cipher speed describe the
# machine for the whole report).
STUDIES: dict[str, tuple[Factory, Callable[[Profile], int]]] = {
    "at-rest": (AtRestStudy, pair.disk_bytes),
    "in-transit": (TransitStudy, in_transit.disk_bytes),
}


def build_studies(store: ResultStore, profile: Profile, progress: RunProgress) -> list[Study]:
    return [
        make(store, profile, progress)
        for name, (make, _) in STUDIES.items()
        if name in profile.studies
    ]


def check_disk(path: Path, profile: Profile) -> None:
    """Refuse a data set that cannot fit, before anything is created or loaded."""
    need = sum(disk(profile) for name, (_, disk) in STUDIES.items() if name in profile.studies)
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if free < need * 1.2:
        raise BadInput(
            f"not enough disk at {path}: the data set needs about {need / 2**30:.1f} GiB "
            f"and {free / 2**30:.1f} GiB is free; choose another --out or a smaller data size"
        )
