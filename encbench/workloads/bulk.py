"""Bulk transfer over one connection: what TLS costs a client that streams a whole table
(bulk.lua under sysbench) or dumps a database (`mariadb-dump`), rather than one that connects
often.

Why not `mariadb --quick` for the stream: measured here, its row-by-row output loop held both
plain and TLS reads at about 125-200 MiB/s, hiding the cost of TLS; bulk.lua lets libmariadb
receive the result in C and discards it, so the wire and the cipher set the pace.

Units: `mb` and `mb_per_s` are MiB (2**20 bytes), the unit the table is sized in.  The stream
counts the table's payload bytes per read; the dump counts the SQL text mariadb-dump wrote
(binary payload backslash-escaped, so about 3% larger than the table).

Seconds are the wall time of the whole client process: start-up, connect, the one TLS
handshake, the transfer and exit; against MiB-sized tables the fixed part is milliseconds.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench import proc
from encbench.errors import BadInput
from encbench.servers.mariadb import tls
from encbench.servers.pki import Pki
from encbench.servers.target import Connection


class _Queryable(Protocol):
    """A server the table is made on: a sandbox, or a user's (only its own database)."""

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]: ...


LUA_SCRIPT = Path(__file__).parent / "lua" / "bulk.lua"
TABLE = "encbench_bulk"
ROW_BYTES = 1024  # ~1 KiB rows: a row-by-row stream, not a few huge packets
CHUNK_ROWS = 256 * 256  # rows per INSERT, so a large table is not one huge transaction
MIB = 2**20
# GRANT ALL ON db.* (connrate.create_user) is enough for dump(): SELECT, SHOW VIEW and
# TRIGGER for the objects; --single-transaction alone takes no FLUSH TABLES WITH READ LOCK
# (only --master-data/--flush-logs do), so neither RELOAD nor LOCK TABLES is needed.
DUMP_OPTIONS = ("--single-transaction", "--quick", "--skip-lock-tables")


@dataclass(frozen=True)
class BulkTable:
    rows: int
    payload_bytes: int  # SUM(LENGTH(payload)) + 4 bytes of INT id per row, as stored


@dataclass(frozen=True)
class BulkRead:
    seconds: float
    bytes: int
    mb_per_s: float  # MiB/s

    @classmethod
    def of(cls, seconds: float, count: int) -> BulkRead:
        return cls(seconds, count, count / MIB / seconds if seconds > 0 else 0.0)


def _identifier(name: str) -> str:
    if not re.fullmatch(r"\w+", name, re.ASCII):
        raise BadInput(f"database name {name!r}: use letters, digits and _ only")
    return name


def row_source(database: str, first: int, last: int, *, sequence: bool) -> str:
    """SQL yielding `seq` = first..last (at most CHUNK_ROWS of them): the Sequence engine's
    virtual table when loaded (Debian builds it in; it lives in every database but needs one
    named), else 256 x 256 rows of a recursive CTE, which stays under the server's default
    max_recursive_iterations (1000) that a CTE counting to `last` would hit."""
    if not 0 <= last - first < CHUNK_ROWS:
        raise ValueError(f"{first}..{last} is not a chunk of 1 to {CHUNK_ROWS} rows")
    if sequence:
        return f"SELECT seq FROM `{database}`.seq_{first}_to_{last}"
    return (
        "WITH RECURSIVE b(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM b WHERE n < 255) "
        f"SELECT {first} + hi.n * 256 + lo.n AS seq FROM b AS hi, b AS lo "
        f"WHERE hi.n * 256 + lo.n <= {last - first}"
    )


def create_table(server: _Queryable, database: str, mb: int) -> BulkTable:
    """`database`.encbench_bulk with `mb` MiB of RANDOM_BYTES (incompressible, so neither
    page compression nor a compressing link can shrink it); kept when already that size."""
    if mb <= 0:
        raise BadInput(f"bulk table size must be > 0 MiB (got {mb})")
    table = f"`{_identifier(database)}`.{TABLE}"
    rows = mb * MIB // ROW_BYTES
    wanted = BulkTable(rows, rows * (ROW_BYTES + 4))
    server.query(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    if server.query(f"SHOW TABLES FROM `{database}` LIKE '{TABLE}'"):
        if _size(server, table) == wanted:
            return wanted
        server.query(f"DROP TABLE {table}")
    server.query(f"CREATE TABLE {table} (id INT PRIMARY KEY, payload VARBINARY({ROW_BYTES}))")
    sequence = sequence_loaded(server)
    for first in range(1, rows + 1, CHUNK_ROWS):
        source = row_source(database, first, min(first + CHUNK_ROWS - 1, rows), sequence=sequence)
        server.query(
            f"INSERT INTO {table} SELECT seq, RANDOM_BYTES({ROW_BYTES}) FROM ({source}) AS r"
        )
    return _size(server, table)


def sequence_loaded(server: _Queryable) -> bool:
    sql = "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'SEQUENCE' AND SUPPORT = 'YES'"
    return bool(server.query(sql))


def _size(server: _Queryable, table: str) -> BulkTable:
    count, payload = server.query(f"SELECT COUNT(*), SUM(LENGTH(payload)) FROM {table}")[0]
    return BulkTable(int(count), int(payload or 0) + 4 * int(count))


def connection_args(target: Connection, pki: Pki | None) -> list[str]:
    """Options shared by mariadb and mariadb-dump (--no-defaults must come first); TCP even
    if host is 'localhost', which libmariadb would otherwise take as the unix socket."""
    args = ["--no-defaults", "--protocol=TCP", f"-h{target.host}", f"-P{target.port}"]
    args.append(f"-u{target.user}")
    if pki is None:
        return [*args, "--skip-ssl"]
    args += ["--ssl", f"--ssl-ca={pki.ca_cert}", "--ssl-verify-server-cert"]
    return [*args, f"--ssl-cert={pki.client_cert}", f"--ssl-key={pki.client_key}"]


def _timed(
    argv: list[str],
    *,
    phase: str,
    cwd: Path,
    password: str,
    log: Path,
    timeout_s: float,
    prefix: Sequence[str],
) -> float:
    """Wall seconds of the whole client process (start, connect, handshake, transfer, exit).
    stdout goes to /dev/null (a copy into Python or a file would be part of what is timed);
    stderr goes to `log` for the error's tail."""
    start = time.monotonic()
    proc.run(
        [*prefix, *argv],
        phase=phase,
        timeout_s=timeout_s,
        cwd=cwd,
        stdout_path=Path(os.devnull),
        stderr_path=log,
        env=tls.client_env(password),
        hint=tls.CLIENT_HINT,
    )
    return time.monotonic() - start


def dump(
    target: Connection,
    *,
    pki: Pki | None,
    password: str,
    workdir: Path,
    log: Path,
    timeout_s: float,
    database: str,
    prefix: Sequence[str] = (),
) -> BulkRead:
    """mariadb-dump of the whole database over one connection.  The dump is written to a
    file in workdir and deleted once measured: a page-cache write costs far less than the
    transfer, while counting through a pipe would put another process's copies in the window."""
    out = workdir / "encbench-bulk-dump.sql"
    argv = [proc.which("mariadb-dump") or "mariadb-dump", *connection_args(target, pki)]
    argv += [*DUMP_OPTIONS, f"--result-file={out}", _identifier(database)]
    try:
        seconds = _timed(
            argv,
            phase="bulk dump (mariadb-dump)",
            cwd=workdir,
            password=password,
            log=log,
            timeout_s=timeout_s,
            prefix=prefix,
        )
        return BulkRead.of(seconds, out.stat().st_size)
    finally:
        out.unlink(missing_ok=True)
