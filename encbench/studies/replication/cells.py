"""Which replication cells a profile asks for: per write workload and thread count."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.studies.replication.options import replication_options
from encbench.studies.replication.records import ReplicationCell


def cells(profile: Profile) -> list[ReplicationCell]:
    """The study's cells, in the profile's order (none when it does not run)."""
    if "replication" not in profile.studies:
        return []
    spec = replication_options(profile)
    return [ReplicationCell(w, n) for w in spec.workloads for n in spec.threads]
