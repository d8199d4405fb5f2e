"""What a sandboxed server needs, estimated before any data is loaded: its disk for sysbench's
rows and InnoDB's own files, its buffer pool for a regime, and the memory it takes beyond
that pool.  Estimates for the disk and memory checks and for sizing a pool, not measurements."""

from __future__ import annotations

import math
from typing import Protocol

# sysbench's row: int id, int k, char(120) c, char(60) pad, plus the k index and page slack.
# The sandboxed servers' max_connections (servers/mariadb/options.py renders it; a test keeps the
# two equal).  Some are kept for encbench's own status and proof queries, and for
# disconnects the server has not finished yet when a connect test opens the next one.
SERVER_MAX_CONNECTIONS = 600
HARNESS_CONNECTIONS = 10

BYTES_PER_ROW_ESTIMATE = 260
SYSTEM_FILES_ESTIMATE = 250 << 20  # ibdata, redo log, undo, system schema per server
IN_MEMORY_RESERVE_MB = 64
# What a server needs beyond its buffer pool (connections, dictionary, log buffer): an
# allowance for the memory check, not a measurement.
SERVER_ALLOWANCE_MB = 128


class PoolRule(Protocol):
    """How a regime sizes the buffer pool (the profile's [regime])."""

    @property
    def in_memory_headroom(self) -> float: ...

    @property
    def io_bound_fraction(self) -> float: ...

    @property
    def min_buffer_pool_mb(self) -> int: ...


def rows_mb(rows: int) -> float:
    """This many of sysbench's rows, as estimated before loading them."""
    return rows * BYTES_PER_ROW_ESTIMATE / 2**20


def data_dir_bytes(rows: int) -> int:
    """One server's data directory with this many of sysbench's rows: the rows and InnoDB's
    own files."""
    return rows * BYTES_PER_ROW_ESTIMATE + SYSTEM_FILES_ESTIMATE


def pool_mb(data_mb: float, regime: str, rule: PoolRule) -> int:
    """The buffer pool of a regime for this much data."""
    if regime == "in-memory":
        # + a constant: InnoDB keeps part of a small pool for itself (adaptive hash index,
        # locks), so a pool of 2 × 5 MB does not hold 5 MB of pages.
        size = math.ceil(data_mb * rule.in_memory_headroom) + IN_MEMORY_RESERVE_MB
    else:
        size = math.floor(data_mb * rule.io_bound_fraction)
    return max(rule.min_buffer_pool_mb, size)
