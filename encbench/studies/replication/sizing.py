"""What the replication study needs before anything starts: two clusters of two nodes, each
node with its own copy of the data and a buffer pool that holds it."""

from __future__ import annotations

from encbench.profile import Profile
from encbench.servers.sizing import (
    BYTES_PER_ROW_ESTIMATE,
    SERVER_ALLOWANCE_MB,
    SYSTEM_FILES_ESTIMATE,
)
from encbench.studies.replication.cluster import buffer_pool_mb

NODES = 4  # two clusters, up at once, of two nodes each


def disk_bytes(profile: Profile) -> int:
    rows = profile.data.tables * profile.data.table_size
    return NODES * (rows * BYTES_PER_ROW_ESTIMATE + SYSTEM_FILES_ESTIMATE)


def memory_mb(profile: Profile) -> tuple[int, str]:
    pool = buffer_pool_mb(profile)
    return NODES * (pool + SERVER_ALLOWANCE_MB), (
        f"two 2-node clusters up at once, each node a {pool:,} MB buffer pool + "
        f"{SERVER_ALLOWANCE_MB} MB; use smaller data (data.tables, data.table_size)"
    )
