"""The flushing a write run leaves behind, charged to that run.

A write transaction only dirties pages in the buffer pool; InnoDB writes (and, on the
encrypted server, encrypts) them later, in its page cleaner, perhaps during the next run —
which may be the other variant's.  So after a write workload's sysbench run the window of the
server's CPU stays open until the buffer pool's dirty pages are back to what they were when
the run started: InnoDB's page cleaner is told to flush everything
(innodb_max_dirty_pages_pct = 0, its documented meaning, at an innodb_io_capacity the disk
and not the setting limits) and Innodb_buffer_pool_pages_dirty is polled; the settings are
restored at once after.  The wait is bounded (FLUSH_WAIT_MAX_S);
what is still dirty then is recorded with the run.

Before such a run the same flush is done outside the window, so that the warm-up's pages are
not charged to the first measured run and every run starts from a clean pool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from encbench.servers.cgroup import CpuCounter
from encbench.servers.mariadb.sandbox import SandboxServer

FLUSH_WAIT_MAX_S = 30.0
# innodb_io_capacity (and its maximum) during the flush wait: pages a second, far above what
# the disk under a sandbox writes, so that the disk and not the setting paces the flush.
FLUSH_IO_CAPACITY = 100_000
# How the server's CPU per transaction is counted, in words for the report (at-rest.json).
CPU_MEASUREMENT = (
    "counted over sysbench's event loop only (a Lua hook reads the server's CPU counter where "
    "the loop starts, after every connect and statement preparation, and where it ends); "
    "for write workloads the window stays open after sysbench until the buffer pool's dirty "
    "pages are back to their number at the start (innodb_max_dirty_pages_pct = 0 and "
    f"innodb_io_capacity = {FLUSH_IO_CAPACITY:,} meanwhile), "
    "so the flushing, and encrypting, of the run's pages is charged to the run; each run "
    f"records that wait (at most {FLUSH_WAIT_MAX_S:.0f} s) and the pages still dirty then. "
    "TPS and latency are sysbench's own."
)
# A poll is one small status query, its server CPU inside the window for both variants alike.
POLL_S = 0.02
DIRTY = "Innodb_buffer_pool_pages_dirty"


@dataclass(frozen=True)
class FlushWait:
    """How the flush wait ended: when, the server's raw CPU counter then, how long it took
    and how many pages were still dirty (more than the target only at the bound)."""

    end_ns: int
    end_counter: int
    wait_s: float
    dirty_left: int


def dirty_pages(server: SandboxServer) -> int:
    rows = server.query(f"SHOW GLOBAL STATUS LIKE '{DIRTY}'", timeout_s=server.status_timeout_s)
    return int(rows[0][1]) if rows else 0


def flush(
    server: SandboxServer,
    counter: CpuCounter,
    *,
    target: int = 0,
    timeout_s: float = FLUSH_WAIT_MAX_S,
) -> FlushWait:
    """Flush until at most `target` pages are dirty (or timeout_s passed); the counter is
    read the moment the target is seen, before the setting is restored."""
    started = time.monotonic()
    dirty = dirty_pages(server)
    if dirty <= target:
        return FlushWait(time.monotonic_ns(), counter.raw(), 0.0, dirty)
    previous, capacity, capacity_max = server.query(
        "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_io_capacity, "
        "@@GLOBAL.innodb_io_capacity_max"
    )[0]
    server.query("SET GLOBAL innodb_max_dirty_pages_pct = 0")
    # Above innodb_max_dirty_pages_pct the page cleaner writes innodb_io_capacity pages a
    # second (buf0flu.cc: af_get_pct_for_dirty, "100% of innodb_io_capacity"): at the
    # default 200, a second of writes on data of a few hundred MB left 10,000–18,000 dirty
    # pages that 30 s did not flush, on a disk 2% busy.  The same pages are written either
    # way; only the wait is shorter.  The maximum first: the capacity may not exceed it.
    server.query(f"SET GLOBAL innodb_io_capacity_max = {FLUSH_IO_CAPACITY}")
    server.query(f"SET GLOBAL innodb_io_capacity = {FLUSH_IO_CAPACITY}")
    try:
        # One connection for every poll, not one each (a handshake and a login per poll,
        # inside the window: encbench's own CPU).
        with server.cursor(timeout_s=server.status_timeout_s) as cur:
            while True:
                cur.execute(f"SHOW GLOBAL STATUS LIKE '{DIRTY}'")
                rows = cur.fetchall()
                dirty = int(rows[0][1]) if rows else 0
                if dirty <= target or time.monotonic() - started >= timeout_s:
                    end_counter, end_ns = counter.raw(), time.monotonic_ns()
                    return FlushWait(end_ns, end_counter, time.monotonic() - started, dirty)
                time.sleep(POLL_S)
    finally:
        server.query("SET GLOBAL innodb_max_dirty_pages_pct = %s", (previous,))
        server.query("SET GLOBAL innodb_io_capacity = %s", (capacity,))
        server.query("SET GLOBAL innodb_io_capacity_max = %s", (capacity_max,))
