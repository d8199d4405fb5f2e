"""What the state-transfer study needs before anything starts: disk for every node's copy of
the data (the donor's, the joiner's, and mariadb-backup's staging of it on the joiner while
it is received and prepared), and memory for every node."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.servers.sizing import (
    SERVER_ALLOWANCE_MB,
    data_dir_bytes,
)
from encbench.studies.state_transfer.cluster import buffer_pool_mb
from encbench.studies.state_transfer.options import PIPELINES, state_transfer_options

# The donor's data, the joiner's copy, and mariadb-backup's: the joiner receives into
# DATA/.sst and moves it back, so it holds the data twice for a moment.
COPIES = 3


def disk_bytes(profile: Profile) -> int:
    spec = state_transfer_options(profile)
    one = data_dir_bytes(spec.data(profile.data).rows)
    # A raw pipeline's target directory on the joiner's host holds one more copy.
    pipelines = any(m in PIPELINES for m in spec.methods)
    return spec.nodes * one + (COPIES - 2 + pipelines) * one


def memory_mb(profile: Profile) -> tuple[int, str]:
    pool = buffer_pool_mb(profile)
    nodes = state_transfer_options(profile).nodes
    # + mariadb-backup --prepare on the joiner (its --use-memory is the pool).
    need = nodes * (pool + SERVER_ALLOWANCE_MB) + pool
    return need, (
        f"{nodes} Galera nodes, each a {pool:,} MB buffer pool + {SERVER_ALLOWANCE_MB} MB, and "
        "mariadb-backup's prepare; use smaller data (state_transfer.tables and "
        "state_transfer.table_size, or [data]'s)"
    )
