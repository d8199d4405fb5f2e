"""The PostgreSQL at-rest proofs.

Once, after loading (as the MariaDB study's filesystem layer): a random marker row is written
through each server (its own table), the server is stopped — a fast shutdown writes a
checkpoint: every dirty page in its file, every file closed — and the filesystems synced;
then the marker must be in the plain server's raw image and absent from the encrypted
side's, whose names listed without the key must be none of the real ones
(proof/at_rest.prove_image).

Per run: the server's directory was on its own image's loop device throughout (the device
mounted there at the run's end), and in the io-bound regime its memory group's page cache
held less than the data: the reads that missed shared_buffers could not all come from RAM.
"""

from __future__ import annotations

import secrets

from encbench.errors import ProofError
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.studies.at_rest.postgresql_pgbench import DATABASE
from encbench.studies.at_rest.records import RunRecord

PROOF_TABLE = "encbench_proof"


def write_marker(server: PgSandbox) -> bytes:
    """A random marker in a row of its own table (text this short is stored as it is: not
    compressed, not moved out of line), written before the caller's fast shutdown."""
    marker = f"ENCBENCH-MARKER-{secrets.token_hex(8)}"
    server.execute(
        f"CREATE TABLE IF NOT EXISTS {PROOF_TABLE} (id int PRIMARY KEY, marker text)",
        f"INSERT INTO {PROOF_TABLE} VALUES (1, '{marker}') "
        "ON CONFLICT (id) DO UPDATE SET marker = excluded.marker",
        "CHECKPOINT",
        database=DATABASE,
    )
    return marker.encode()


def check_run(record: RunRecord, loop: str) -> None:
    """The run against its server's image and, io-bound, against the memory it could hold."""
    what = f"{record.cell.label}, {record.variant} run"
    if record.device != loop:
        raise ProofError(
            f"{what}: the server's directory was on {record.device or 'no device'}, not on "
            f"its image's {loop}"
        )
    cached_mib, data = record.page_cache_mb, record.data_bytes
    if cached_mib is None or not data:
        raise ProofError(f"{what}: the server's page cache or its data's size was not read")
    if record.cell.regime == "io-bound" and cached_mib * 2**20 >= data:
        raise ProofError(
            f"{what}: the server's page cache held {cached_mib:,.0f} MiB, "
            f"as much as the {data / 2**20:,.0f} MiB of data: not io-bound"
        )
