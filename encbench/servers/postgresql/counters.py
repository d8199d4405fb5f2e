"""PostgreSQL's own cumulative counters of what encryption at rest and in transit would act
on, in one statement any login can run (the statistics views need no grant):

  blocks_read     sum(pg_stat_database.blks_read): blocks read from the filesystem (the
                  kernel's page cache or the disk: PostgreSQL cannot tell them apart)
  blocks_written  the blocks written by the checkpointer, the background writer and the
                  backends (pg_stat_bgwriter's buffers_checkpoint + buffers_clean +
                  buffers_backend; from PostgreSQL 17 pg_stat_io's relation writes)
  wal_bytes       pg_stat_wal.wal_bytes: the write-ahead log written
  sessions        sum(pg_stat_database.sessions): connections made, each one handshake
                  where it uses TLS
  transactions    sum(xact_commit + xact_rollback)

with the postmaster's start (a restart resets what it counted) and the client connections
open now, those on TLS apart (pg_stat_ssl).  PostgreSQL counts no bytes per connection: what
goes through TLS is not known to it.  Used by the at-rest study around each run (the units of
`encbench estimate`) and by `encbench estimate --target postgresql://`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_VERSION = 140000  # pg_stat_database.sessions and pg_stat_wal: PostgreSQL 14
IO_VIEW_VERSION = 170000  # pg_stat_bgwriter lost buffers_checkpoint and buffers_backend

_WRITES_BGWRITER = (
    "(SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter)"
)
_WRITES_IO = "(SELECT coalesce(sum(writes), 0)::bigint FROM pg_stat_io WHERE object = 'relation')"
# Client connections other than the reader's own.
_CLIENTS = (
    "FROM pg_stat_activity a LEFT JOIN pg_stat_ssl s USING (pid) "
    "WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()"
)


def snapshot_sql(version_num: int) -> str:
    """The one statement, for the server's version (SHOW server_version_num)."""
    writes = _WRITES_IO if version_num >= IO_VIEW_VERSION else _WRITES_BGWRITER
    return (
        "SELECT (SELECT coalesce(sum(blks_read), 0) FROM pg_stat_database), "
        f"{writes}, "
        "(SELECT wal_bytes FROM pg_stat_wal), "
        "(SELECT coalesce(sum(sessions), 0) FROM pg_stat_database), "
        "(SELECT coalesce(sum(xact_commit + xact_rollback), 0) FROM pg_stat_database), "
        "extract(epoch FROM pg_postmaster_start_time()), "
        f"(SELECT count(*) {_CLIENTS}), "
        f"(SELECT count(*) FILTER (WHERE s.ssl) {_CLIENTS})"
    )


@dataclass(frozen=True)
class Snapshot:
    """One reading of the counters."""

    blocks_read: int
    blocks_written: int
    wal_bytes: int
    sessions: int
    transactions: int
    started_s: float  # the postmaster's start, Unix seconds
    clients: int  # client connections open now (the reader's own left out)
    clients_tls: int  # of them on TLS


def parse(row: Sequence[str]) -> Snapshot:
    """A row of snapshot_sql's answer (the server's text); ValueError where it is not one."""
    if len(row) != 8:
        raise ValueError(f"expected 8 columns of PostgreSQL's counters, got {len(row)}")
    numbers = [int(float(v)) for v in row[:5]]
    return Snapshot(
        blocks_read=numbers[0],
        blocks_written=numbers[1],
        wal_bytes=numbers[2],
        sessions=numbers[3],
        transactions=numbers[4],
        started_s=float(row[5]),
        clients=int(row[6]),
        clients_tls=int(row[7]),
    )
