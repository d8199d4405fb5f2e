"""Which at-rest cells a profile asks for: per regime, workload and thread count."""

from __future__ import annotations

from encbench.profile import Profile
from encbench.results.schema import CellKey


def cells(profile: Profile) -> list[CellKey]:
    """The at-rest study's cells (none when the profile does not run that study)."""
    if "at-rest" not in profile.studies:
        return []
    m = profile.measure
    return [
        CellKey(workload, regime, threads)
        for regime in m.regimes
        for workload in m.workloads
        for threads in m.threads
    ]
