"""What the operations study asks InnoDB about its tablespaces: which are encrypted, with
which key version, and whether the background threads are still at work
(INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION); and the waits and windows built on it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from encbench.errors import ProofError
from encbench.servers.mariadb.sandbox import SandboxServer

ENCRYPTION_POLL_S = 0.05
TABLE_STATES = (
    "SELECT NAME, ENCRYPTION_SCHEME, MIN_KEY_VERSION, ROTATING_OR_FLUSHING, "
    "KEY_ROTATION_PAGE_NUMBER FROM information_schema.INNODB_TABLESPACES_ENCRYPTION"
)
States = tuple[int, int, bool]
Counter = Callable[[Sequence[Sequence[Any]], str], States]


def count_states(rows: Sequence[Sequence[Any]], database: str) -> States:
    """(tables with crypt data, of them wholly encrypted, whether any tablespace is still
    being (re-)encrypted) from INNODB_TABLESPACES_ENCRYPTION's rows, for the study's database:
    a table is wholly encrypted when its scheme is 1 and its oldest page's key version is not
    0.  A table never encrypted has no crypt data and no row there (sysbench_tables counts
    all)."""
    return count_key_versions(rows, database, 1)


def count_key_versions(rows: Sequence[Sequence[Any]], database: str, version: int) -> States:
    """As count_states, counting the tables encrypted with every page at key `version` or
    later (MIN_KEY_VERSION, the oldest page's): key rotation's progress."""
    ours = [r for r in rows if str(r[0]).startswith(f"{database}/")]
    at = sum(1 for r in ours if int(r[1]) == 1 and int(r[2] or 0) >= version)
    busy = any(int(r[3] or 0) != 0 or r[4] is not None for r in rows)
    return len(ours), at, busy


def table_states(server: SandboxServer) -> States:
    """count_states of the server's tables now, over a connection of its own."""
    return count_states(server.query(TABLE_STATES), server.database)


def key_version_states(server: SandboxServer, version: int) -> States:
    """count_key_versions of the server's tables now, over a connection of its own."""
    return count_key_versions(server.query(TABLE_STATES), server.database, version)


@contextmanager
def polled_states(
    server: SandboxServer, count: Counter = count_states
) -> Iterator[Callable[[], States]]:
    """`count` of the view over one connection for every poll of a window: a connection per
    poll (a handshake and a login each) would be encbench's own CPU inside the measured
    window."""
    with server.cursor(timeout_s=server.status_timeout_s) as cur:

        def states() -> States:
            cur.execute(TABLE_STATES)
            return count(cur.fetchall(), server.database)

        yield states


def at_version(version: int) -> Counter:
    return lambda rows, database: count_key_versions(rows, database, version)


def commits(server: SandboxServer) -> int:
    return int(server.query("SHOW GLOBAL STATUS LIKE 'Com_commit'")[0][1])


def sysbench_tables(server: SandboxServer) -> int:
    """The tables of the study's database (sbtest1…N and the proof's table), from InnoDB's
    dictionary: after a restart the tablespace views list only the files opened since."""
    return int(
        server.query(
            "SELECT COUNT(*) FROM information_schema.INNODB_SYS_TABLES WHERE NAME LIKE %s",
            (f"{server.database}/%",),
        )[0][0]
    )


def wait_tables(
    server: SandboxServer, encrypted: bool, timeout_s: float, want: int | None = None
) -> int:
    """Wait until every table of the database (`want`, counted here when not given) is
    encrypted (or none is) and no tablespace is being rotated; returns how many are
    encrypted."""
    deadline = time.monotonic() + timeout_s
    if want is None:
        want = sysbench_tables(server)
    with polled_states(server) as states:
        while True:
            _, done, busy = states()
            if not busy and done == (want if encrypted else 0):
                return done
            if time.monotonic() > deadline:
                what = "encrypted" if encrypted else "decrypted"
                raise ProofError(
                    f"the {server.name} server's tables were not {what} within "
                    f"{timeout_s:.0f} s ({done} of {want} encrypted, rotation busy: {busy})"
                )
            time.sleep(ENCRYPTION_POLL_S)


def wait_key_version(server: SandboxServer, version: int, timeout_s: float, want: int) -> None:
    """Wait until all `want` tables have every page at key `version` and no tablespace is
    being rotated (the polling of wait_tables: one connection, the same period)."""
    deadline = time.monotonic() + timeout_s
    with polled_states(server, at_version(version)) as states:
        while True:
            _, at, busy = states()
            if not busy and at == want:
                return
            if time.monotonic() > deadline:
                raise ProofError(
                    f"the {server.name} server's tables were not re-encrypted with key "
                    f"version {version} within {timeout_s:.0f} s ({at} of {want}, rotation "
                    f"busy: {busy})"
                )
            time.sleep(ENCRYPTION_POLL_S)


def poll_tables(server: SandboxServer, seconds: float, count: Counter = count_states) -> None:
    """The plain side's window: the query the encrypted side waits with, over one connection
    at its period, for `seconds`, so that both sides' windows carry the same polling (the
    server's and encbench's work)."""
    end = time.monotonic() + seconds
    with polled_states(server, count) as states:
        while time.monotonic() < end:
            states()
            time.sleep(ENCRYPTION_POLL_S)


def key_version(server: SandboxServer, variable: str) -> int:
    """The key plugin's latest version (its dynamic `<plugin>_version`)."""
    return int(server.query(f"SELECT @@GLOBAL.{variable}")[0][0])
