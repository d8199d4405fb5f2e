"""The bulk table of PostgreSQL's copy test, and the client that streams it: psql with
`COPY … TO STDOUT`, again and again for a run's seconds, each copy through a connection of
its own; psql reads every row and drops it (its output goes to /dev/null), so a run is the
wire and both ends' work on it.  A copy is the test's transaction: copies per second times
the stream's bytes is MiB/s."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from encbench import proc
from encbench.servers.postgresql.sandbox import program

TABLE = "encbench_bulk"
# Each row: an id and 256 hex characters (random: nothing on the way compresses it).
ROW_HEX_CHARS = 256
ROW_BYTES_ESTIMATE = ROW_HEX_CHARS + 10
# What COPY's text format streams of the table: every column as text, a tab between, a
# newline after; the hex payload needs no escaping.
STREAM_BYTES_SQL = f"SELECT sum(octet_length(id::text) + octet_length(payload) + 2) FROM {TABLE}"


def rows_for(mib: int) -> int:
    return max(1, mib * 2**20 // ROW_BYTES_ESTIMATE)


def create_sql(mib: int, reader: str) -> list[str]:
    """The statements that make the table of about `mib` MiB of COPY text, readable by
    `reader`."""
    repeats = ROW_HEX_CHARS // 32  # md5 gives 32 hex characters
    return [
        f"CREATE TABLE {TABLE} AS SELECT g AS id, "
        f"repeat(md5(g::text || random()::text), {repeats}) AS payload "
        f"FROM generate_series(1, {rows_for(mib)}) AS g",
        f"GRANT SELECT ON {TABLE} TO {reader}",
        f"VACUUM ANALYZE {TABLE}",
    ]


def copy(
    seconds: int,
    env: Mapping[str, str],
    log: Path,
    stream_bytes: int,
    prefix: Sequence[str] = (),
) -> tuple[int, float]:
    """Copies until `seconds` have passed (at least one), psql on the client's host
    (`prefix`); the run's figures in `log`, each psql's errors beside it; the copies made
    and the seconds they took."""
    errors = log.with_name(log.name + ".stderr")
    began = time.monotonic()
    copies, elapsed = 0, 0.0
    while copies == 0 or elapsed < seconds:
        proc.run(
            [
                *prefix,
                program("psql"),
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                f"COPY {TABLE} TO STDOUT",
            ],
            phase="psql COPY … TO STDOUT",
            timeout_s=600,
            stdout_path=Path(os.devnull),
            stderr_path=errors,
            env=env,
            hint=f"its errors are in {errors}",
        )
        copies += 1
        elapsed = time.monotonic() - began
    errors.unlink(missing_ok=True)
    rate = copies / elapsed
    log.write_text(
        f"copies: {copies}\nbytes per copy: {stream_bytes}\nseconds: {elapsed:.6f}\n"
        f"copies/s: {rate:.6f}\nMiB/s: {rate * stream_bytes / 2**20:.3f}\n"
    )
    return copies, elapsed
