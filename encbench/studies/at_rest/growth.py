"""What a write run leaves beside dirty pages, undone before the next run of the same server,
outside the measured window, so that both variants run every round on the same data.

- oltp_insert adds rows (ids above table_size, from AUTO_INCREMENT): the faster variant would
  add more, and its tables would grow apart from the other's round by round.  Before every
  run (the warm-up's rows too) the rows above table_size are deleted and InnoDB's purge is
  waited for (`innodb_max_purge_lag_wait = 0`: the SET returns when the history is purged),
  so each run starts with exactly the prepared rows.  The other write workloads keep the row
  count: oltp_write_only and oltp_read_write delete and re-insert the same id, the updates
  change fixed-width columns.
- The binary log, where both variants write one, grows with every write run: the logs
  before the current one are purged, so that disk use stays bounded over a long profile.
"""

from __future__ import annotations

from encbench.servers.sandbox import SandboxServer

GROWING_WORKLOADS = frozenset({"oltp_insert"})
# Purge waits for the history of every earlier transaction; with no other client that is
# the deletes just made, seconds at most for a profile's data.
PURGE_TIMEOUT_S = 300.0

# The steady design (steady.py) trims only before each warm-up: a trim and its purge between
# two runs would leave the write path out of its steady state.
STEADY_DATA_NOTE = (
    "oltp_insert adds rows: before each warm-up to the steady state the rows above the "
    "prepared table size are deleted and purged, so every block of both variants starts with "
    "the same rows; within a block the tables grow, the faster side's a little more."
)
DATA_NOTE = (
    "oltp_insert adds rows: before each of its runs, outside the measured window, the rows "
    "above the prepared table size are deleted and purged, so every run of both variants "
    "starts with the same rows."
)


def trim_inserted_rows(server: SandboxServer, tables: int, table_size: int) -> int:
    """Delete the rows oltp_insert added (ids above table_size) and wait for purge; returns
    how many rows were removed."""
    removed = 0
    with server.cursor(database=server.database, timeout_s=PURGE_TIMEOUT_S) as cur:
        for i in range(1, tables + 1):
            removed += cur.execute(f"DELETE FROM sbtest{i} WHERE id > %s", (table_size,))
        cur.execute("SET GLOBAL innodb_max_purge_lag_wait = 0")
    return removed


def purge_binary_logs(server: SandboxServer) -> None:
    """Keep only the binary log being written (no-op without one)."""
    with server.cursor(timeout_s=PURGE_TIMEOUT_S) as cur:
        cur.execute("SELECT @@GLOBAL.log_bin")
        row = cur.fetchone()
        if not row or not int(row[0]):
            return
        cur.execute("SHOW MASTER STATUS")
        current = cur.fetchone()
        if current:
            cur.execute("PURGE BINARY LOGS TO %s", (current[0],))


def before_write_run(server: SandboxServer, workload: str, tables: int, table_size: int) -> None:
    """Everything a write run must find as the first run found it (see the module)."""
    if workload in GROWING_WORKLOADS:
        trim_inserted_rows(server, tables, table_size)
    purge_binary_logs(server)
