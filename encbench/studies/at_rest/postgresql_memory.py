"""Each server's memory in a regime: its group (servers/shapes.ShapedGroup, a memory limit of
shared_buffers and the cache allowance, every CPU encbench may use), the page cache of its
files emptied before it starts, and, in memory, its data read into shared_buffers.

Why empty the cache: the kernel charges a cached page to the group that first read it, and a
page loaded before (by pgbench -i, or by the server in the regime before, whose group is
gone) stays cached and charged elsewhere: an io-bound server would read it from RAM beyond
its budget.  The server stopped and its files synced, their clean pages are dropped file by
file (posix_fadvise DONTNEED): the rest of the machine's cache is left alone."""

from __future__ import annotations

import os
from pathlib import Path

from encbench.servers import page_cache, shapes
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.studies.at_rest.postgresql_pgbench import DATABASE

PREWARM_EXTENSION = "CREATE EXTENSION IF NOT EXISTS pg_prewarm"
PREWARM_SQL = (
    "SELECT coalesce(sum(pg_prewarm(c.oid::regclass)), 0) FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
)
PREWARM_TIMEOUT_S = 1800.0


def drop_cached(directory: Path) -> int:
    """Every file below `directory` (its server stopped) written out and its pages dropped
    from the page cache (servers/page_cache.py); returns how many files."""
    os.sync()
    return page_cache.drop(directory)


def prewarm(server: PgSandbox) -> int:
    """Every table and index of the benchmark read into shared_buffers (pg_prewarm, the
    contrib module PostgreSQL ships): the blocks read."""
    server.execute(PREWARM_EXTENSION, database=DATABASE)
    rows = server.query(PREWARM_SQL, database=DATABASE, timeout_s=PREWARM_TIMEOUT_S)
    return int(rows[0][0]) if rows else 0


def held(server: PgSandbox) -> shapes.GroupMemory:
    """What the server's group holds now."""
    assert server.shaped is not None, "a regime's server runs in its group"
    return server.shaped.memory()
