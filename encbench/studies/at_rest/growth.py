"""What a write run leaves beside dirty pages, undone before the next run of the same server,
outside the measured window, so that both variants run every round on the same data.

- oltp_insert adds rows (ids above table_size, from AUTO_INCREMENT): the faster variant would
  add more, and its tables would grow apart from the other's round by round.  Before every
  run (the warm-up's rows too) the rows above table_size are deleted and InnoDB's purge is
  waited for (MariaDB: `innodb_max_purge_lag_wait = 0`, the SET returns when the history is
  purged; MySQL, which lacks it: its history list length polled),
  so each run starts with exactly the prepared rows.  The other write workloads keep the row
  count: oltp_write_only and oltp_read_write delete and re-insert the same id, the updates
  change fixed-width columns.
- The binary log, where both variants write one, grows with every write run: the logs
  before the current one are purged, so that disk use stays bounded over a long profile.
"""

from __future__ import annotations

import time
from typing import Any

from encbench.errors import ServerError
from encbench.servers.mariadb.sandbox import SandboxServer

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
        if not server.install.mysql:
            cur.execute("SET GLOBAL innodb_max_purge_lag_wait = 0")
        else:
            _wait_for_purge(cur, server.name)
    return removed


def _wait_for_purge(cur: Any, name: str) -> None:
    """MySQL has no innodb_max_purge_lag_wait: poll its history list length (InnoDB's
    `trx_rseg_history_len` metric, one entry per committed transaction's undo log) until it
    is empty, as MariaDB's wait does.  Purge takes the oldest first, so any count above 0
    may still hold the deletes just made: nothing short of empty says they are purged."""
    deadline = time.monotonic() + PURGE_TIMEOUT_S
    while True:
        cur.execute(
            "SELECT COUNT FROM information_schema.INNODB_METRICS "
            "WHERE NAME = 'trx_rseg_history_len'"
        )
        row = cur.fetchone()
        left = int(row[0]) if row is not None else 0
        if left == 0:
            return
        if time.monotonic() > deadline:
            raise ServerError(
                f"the {name} server's purge left {left} undo logs after "
                f"{PURGE_TIMEOUT_S:g} s: its tables could not be brought back to the prepared "
                "rows before the next run"
            )
        time.sleep(0.2)


def purge_binary_logs(server: SandboxServer) -> None:
    """Keep only the binary log being written (no-op without one)."""
    with server.cursor(timeout_s=PURGE_TIMEOUT_S) as cur:
        cur.execute("SELECT @@GLOBAL.log_bin")
        row = cur.fetchone()
        if not row or not int(row[0]):
            return
        # SHOW BINARY LOGS, not SHOW MASTER STATUS: MySQL 8.4+ removed the latter.  The last
        # log listed is the one being written.
        cur.execute("SHOW BINARY LOGS")
        logs = cur.fetchall()
        if logs:
            cur.execute("PURGE BINARY LOGS TO %s", (logs[-1][0],))


def before_write_run(server: SandboxServer, workload: str, tables: int, table_size: int) -> None:
    """Everything a write run must find as the first run found it (see the module)."""
    if workload in GROWING_WORKLOADS:
        trim_inserted_rows(server, tables, table_size)
    purge_binary_logs(server)
