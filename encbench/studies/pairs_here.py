"""What the replication and rejoin studies need of this machine and leave on it: the same
for both, as both measure on the same two Galera pairs (galera_pair_studies.py), each node
on its own emulated host."""

from encbench import galera_pair_studies as pairs
from encbench.profile import Profile
from encbench.studies.definition import Here, RootNeed


def root(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


HERE = Here(
    disk_bytes=pairs.disk_bytes,
    memory_mb=pairs.memory_mb,
    tools=pairs.needs,
    root=root,
    creates=pairs.CREATES,
)
