"""Proof, not trust: each variant is shown to be what it claims before it is measured.

Two independent witnesses:
1. The server's own account: INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION must list every
   sbtest table (and the proof table) with ENCRYPTION_SCHEME=1 and background encryption
   finished for `encrypted`, and none of them encrypted for `plain`.
2. The bytes on disk: a random marker string is written into a proof table and flushed with
   FLUSH TABLES … FOR EXPORT; it must be readable in the raw .ibd file of `plain` and absent
   from that of `encrypted`.  sysbench's own rows (the `c` column's digit groups,
   ###########-###########-…) must likewise be visible in plain sbtest*.ibd files and
   invisible in encrypted ones.  With scope `all`, the redo log (where each family keeps it:
   servers/mariadb/logs.py) and the binary logs of `encrypted` must not contain the
   marker either, and `plain`'s must: plain is the positive control, without which "not
   found" could mean a scan that cannot see.  MySQL also gives its own account of its logs
   (redo, undo tablespaces, binary log: servers/mariadb/logs.py), the first witness for
   them.  A redo log or binary log that is missing fails the proof for the same reason.
   Files are scanned whole, in chunks that overlap by more than the longest needle, so a
   marker that straddles two chunks is found.

The second witness needs the data directory (servers/target.py): on a target whose files are
not readable from here it is not run, and the result says so instead of passing silently.

This full proof runs once, after loading.  After every restart (a new buffer pool per regime)
the first witness is asked again (prove_tablespaces), and every run is checked against the
server's counters (the at-rest study's run_proof.py): Innodb_num_pages_decrypted and
Innodb_num_pages_encrypted must not move on `plain`; on `encrypted`, a run in the io-bound
regime that read pages from disk must have decrypted some, and a write run that wrote pages
must have encrypted some.

An A/A calibration proves both servers plain (both witnesses, as for `plain`), and that
their options are the same (`prove_twins`): the pair differs in nothing but its own paths.

Under the filesystem layer (servers/fscrypt.py) the data files read through the mount are
plain by design: a third witness reads below the filesystem (`prove_image`) — the raw image
file, and the encrypted directory's names as the kernel lists them without the key.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from encbench.errors import ProofError
from encbench.servers.mariadb.logs import MARIADB_LOGS, LogFiles, binary_logs
from encbench.servers.mariadb.options import option_difference
from encbench.servers.target import Needs, Target
from encbench.servers.variants import EncryptionSpec
from encbench.servers.volume_pair import VolumePair

PROOF_TABLE = "encbench_proof"
SYSBENCH_ROW = re.compile(rb"\d{11}-\d{11}-\d{11}-\d{11}")
SCAN_CHUNK_BYTES = 8 << 20
# More than the longest needle (a 47-byte sysbench row group, a 32-byte marker): a match that
# straddles two chunks lies whole in the overlap.
SCAN_OVERLAP_BYTES = 256
# How many copies of the marker write_marker leaves: MySQL frames its redo log in 512-byte
# blocks, each with a header and trailer, so one copy of the marker is split by a block
# boundary about once in 16 in the plain server's redo log, where the scan must see it (the
# positive control); four copies, at offsets that are not independent, make a proof that
# misses every one rare (a ProofError, never a false pass).
MARKER_COPIES = 4


def log_problems(states: dict[str, bool], claimed: str) -> list[str]:
    if claimed == "encrypted":
        plain = [log for log, on in states.items() if not on]
        return [f"logs not encrypted per the server: {', '.join(plain)}"] if plain else []
    encrypted = [log for log, on in states.items() if on]
    return [f"logs encrypted per the server: {', '.join(encrypted)}"] if encrypted else []


RAW_FILES = Needs("the raw-file witness (marker and sysbench rows in the data files)", ("datadir",))


@dataclass
class ProofResult:
    variant: str
    tablespaces_checked: int
    tablespaces_encrypted: int
    marker_found_in: list[str] = field(default_factory=list)
    sysbench_rows_found_in: list[str] = field(default_factory=list)
    files_scanned: list[str] = field(default_factory=list)
    passed: bool = False
    explanation: str = ""
    not_proven: list[str] = field(default_factory=list)  # witnesses the target could not give
    # Scope `all` on a family that reports on its logs (MySQL): each log, encrypted or not.
    logs_encrypted: dict[str, bool] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _contains(
    path: Path, needle: bytes | re.Pattern[bytes], chunk_bytes: int = SCAN_CHUNK_BYTES
) -> bool:
    """Whether the whole file holds the needle; read in chunks, each searched together with
    the last SCAN_OVERLAP_BYTES of the one before."""
    tail = b""
    with open(path, "rb") as f:
        while chunk := f.read(chunk_bytes):
            data = tail + chunk
            found = needle in data if isinstance(needle, bytes) else needle.search(data)
            if found:
                return True
            tail = data[-SCAN_OVERLAP_BYTES:]
    return False


def write_marker(server: Target, tables: int) -> bytes:
    marker = f"ENCBENCH-MARKER-{secrets.token_hex(8)}"
    db = server.database
    with server.cursor(database=db) as cur:
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {PROOF_TABLE} "
            "(id INT PRIMARY KEY, marker VARCHAR(64)) ENGINE=InnoDB"
        )
        for copy in range(1, MARKER_COPIES + 1):
            cur.execute(f"REPLACE INTO {PROOF_TABLE} VALUES (%s, %s)", (copy, marker))
        names = [PROOF_TABLE] + [f"sbtest{i}" for i in range(1, tables + 1)]
        # FOR EXPORT makes InnoDB write every dirty page of these tables to their files.
        cur.execute(f"FLUSH TABLES {', '.join(names)} FOR EXPORT")
        cur.execute("UNLOCK TABLES")
    return marker.encode()


def wait_background_encryption(server: Target, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        busy = server.query(
            "SELECT COUNT(*) FROM information_schema.INNODB_TABLESPACES_ENCRYPTION "
            "WHERE ROTATING_OR_FLUSHING <> 0 OR KEY_ROTATION_PAGE_NUMBER IS NOT NULL"
        )[0][0]
        if int(busy) == 0:
            return
        if time.monotonic() > deadline:
            raise ProofError(
                f"{server.name}: background encryption still busy on {busy} tablespaces "
                f"after {timeout_s:.0f} s"
            )
        time.sleep(0.5)


SCHEMES_SQL = (
    "SELECT NAME, ENCRYPTION_SCHEME FROM information_schema.INNODB_TABLESPACES_ENCRYPTION "
    "WHERE NAME LIKE %s"
)


def encryption_schemes(
    server: Target, tables: int, proof_table: bool = True, sql: str = SCHEMES_SQL
) -> dict[str, int]:
    """ENCRYPTION_SCHEME per table; a table without crypt data counts as 0 (not encrypted).
    Only the server's own database's rows are read: on a user's server, only encbench's.
    `sql`: another family's view giving (NAME, 1 or 0) (studies/at_rest/dialects.py)."""
    rows = server.query(sql, (f"{server.database}/%",))
    by_name = {str(name): int(scheme) for name, scheme in rows}
    names = [PROOF_TABLE] if proof_table else []
    names += [f"sbtest{i}" for i in range(1, tables + 1)]
    return {n: by_name.get(f"{server.database}/{n}", 0) for n in names}


def prove(
    server: Target,
    claimed: str,
    spec: EncryptionSpec,
    tables: int,
    name: str | None = None,
    *,
    sql: str = SCHEMES_SQL,
    background: bool = True,
    logs: LogFiles = MARIADB_LOGS,
    logs_claimed: str | None = None,
) -> ProofResult:
    """Check both witnesses (the second where the target's files are readable); raise
    ProofError (with the evidence) when the claim is false.  `name` is how messages call the
    server (a calibration's "B (plain twin)"); by default its claim.  `sql`: another
    family's view of the tablespaces (MySQL's, studies/at_rest/dialects.py); `background`:
    wait for MariaDB's background encryption threads first (MySQL has none: its tables are
    born encrypted); `logs`: where the family keeps the logs of scope `all`, and
    `logs_claimed` what they must be when it is not `claimed` (the control of scope all
    against scope tables: its tables encrypted, its logs plain — the scan's positive
    control)."""
    logs_claimed = logs_claimed or claimed
    if claimed == "encrypted" and background:
        wait_background_encryption(server)
    marker = write_marker(server, tables)
    schemes = encryption_schemes(server, tables, sql=sql)
    result = ProofResult(
        variant=claimed,
        tablespaces_checked=len(schemes),
        tablespaces_encrypted=sum(1 for s in schemes.values() if s == 1),
    )
    result.not_proven = RAW_FILES.missing(server)
    files: list[Path] = []
    scanned_logs: list[Path] = []
    # Groups of logs where plain must show the marker, in at least one file of each.
    controls: list[list[Path]] = []
    problems = []
    if spec.scope == "all" and logs.states is not None:
        result.logs_encrypted = logs.states(server)
        problems += log_problems(result.logs_encrypted, logs_claimed)
    if server.datadir is not None:
        dbdir = server.datadir / server.database
        files = [dbdir / f"{PROOF_TABLE}.ibd"]
        files += [dbdir / f"sbtest{i}.ibd" for i in range(1, tables + 1)]
        if spec.scope == "all":
            binlogs = binary_logs(server.datadir)
            redo = logs.redo_files(server.datadir)
            if not redo:
                problems.append(f"no redo log {logs.redo} to scan")
            if not binlogs:
                problems.append("no binary log (binlog.NNNNNN) to scan")
            scanned_logs = redo + binlogs
            # The marker is in the redo log and in the binary log it was written to (the
            # newest; older ones, rotated during the load, hold only sysbench's rows).
            controls = [group for group in (redo, binlogs[-1:]) if group]
        missing_files = [p.name for p in files if not p.is_file()]
        if missing_files:
            problems.append(f"missing data files: {', '.join(missing_files)}")
        files = [p for p in files if p.is_file()] + scanned_logs
    for path in files:
        result.files_scanned.append(path.name)
        if _contains(path, marker):
            result.marker_found_in.append(path.name)
        if path.name.startswith("sbtest") and _contains(path, SYSBENCH_ROW):
            result.sysbench_rows_found_in.append(path.name)

    sbtest_files = [f.name for f in files if f.name.startswith("sbtest")]
    log_names = {p.name for p in scanned_logs}
    in_tables = [n for n in result.marker_found_in if n not in log_names]
    in_logs = [n for n in result.marker_found_in if n in log_names]
    problems += tablespace_problems(schemes, claimed)
    if claimed == "encrypted":
        if in_tables:
            problems.append(f"marker readable in {', '.join(in_tables)}")
        if result.sysbench_rows_found_in:
            problems.append(f"sysbench rows readable in {', '.join(result.sysbench_rows_found_in)}")
    else:
        if files and f"{PROOF_TABLE}.ibd" not in result.marker_found_in:
            problems.append(f"marker not readable in {PROOF_TABLE}.ibd")
        missing = sorted(set(sbtest_files) - set(result.sysbench_rows_found_in))
        if missing:
            problems.append(f"sysbench rows not readable in {', '.join(missing)}")
    if logs_claimed == "encrypted":
        if in_logs:
            problems.append(f"marker readable in {', '.join(in_logs)}")
    else:
        # The positive control: the scan must see the marker where nothing hides it.
        unseen = [
            " or ".join(p.name for p in group)
            for group in controls
            if not any(p.name in result.marker_found_in for p in group)
        ]
        if unseen:
            problems.append(
                f"marker not readable in {', '.join(unseen)} (the scan that finds nothing "
                "in the encrypted server's logs must find it here)"
            )
    result.passed = not problems
    if problems:
        result.explanation = "; ".join(problems)
        what = claimed if logs_claimed == claimed else f"{claimed} with {logs_claimed} logs"
        raise ProofError(
            f"the {name or claimed} server is not {what}: {result.explanation}. "
            "Its options are in at-rest.json; refusing to measure it."
        )
    result.explanation = (
        f"{result.tablespaces_encrypted}/{result.tablespaces_checked} tablespaces encrypted; "
        + (_marker_words(claimed, logs_claimed, bool(scanned_logs)) if files
           else "; ".join(result.not_proven))
    )  # fmt: skip
    return result


def _marker_words(claimed: str, logs_claimed: str, logs_scanned: bool) -> str:
    """Where the marker was seen or not, as the proof's explanation ends."""
    if claimed == logs_claimed or not logs_scanned:
        return f"marker {'absent from' if claimed == 'encrypted' else 'found in'} raw files"
    tables = "absent from" if claimed == "encrypted" else "found in"
    logs = "absent from" if logs_claimed == "encrypted" else "found in"
    return f"marker {tables} the raw table files, {logs} the logs"


def prove_twins(a: dict[str, str], b: dict[str, str]) -> None:
    """An A/A pair's options: identical but for each sandbox's own paths and port."""
    differ = option_difference(a, b) | option_difference(b, a)
    if differ:
        raise ProofError(
            "the calibration's two servers differ in "
            + ", ".join(f"{k}" for k in sorted(differ))
            + ": an A/A calibration needs identical servers; refusing to measure them"
        )


def tablespace_problems(schemes: dict[str, int], claimed: str) -> list[str]:
    if claimed == "encrypted":
        unencrypted = [n for n, s in schemes.items() if s != 1]
        return [f"not encrypted per the server: {', '.join(unencrypted)}"] if unencrypted else []
    encrypted = [n for n, s in schemes.items() if s == 1]
    return [f"encrypted per the server: {', '.join(encrypted)}"] if encrypted else []


def prove_tablespaces(
    server: Target,
    claimed: str,
    tables: int,
    proof_table: bool = True,
    when: str = "after a restart",
    sql: str = SCHEMES_SQL,
) -> dict[str, Any]:
    """The first witness alone, cheap enough for every restart: INNODB_TABLESPACES_ENCRYPTION
    after the server came back.  Returns the evidence; raises ProofError when it contradicts
    the claim.  Without the proof table: a target's table set, which has none (table_sets)."""
    schemes = encryption_schemes(server, tables, proof_table, sql)
    problems = tablespace_problems(schemes, claimed)
    if problems:
        what = f"the {claimed} server is" if proof_table else f"encbench's {claimed} tables are"
        claim = "it claims" if proof_table else "they claim"
        raise ProofError(f"{when} {what} not what {claim}: {'; '.join(problems)}")
    return {
        "tablespaces_checked": len(schemes),
        "tablespaces_encrypted": sum(1 for s in schemes.values() if s == 1),
        "passed": True,
    }


@dataclass
class ImageProof:
    """The filesystem layer's witnesses, read below the filesystem: the raw image file of a
    server's loop-mounted ext4 (servers/fscrypt.py), and on the encrypted side its
    directory's names as the kernel lists them without the key."""

    variant: str
    image: str  # the image file's name
    encrypted: bool  # the claim: its files are encrypted by the filesystem
    marker_found: bool = False
    entries: int = 0  # names in the encrypted directory
    names_readable_without_key: list[str] = field(default_factory=list)
    example_without_key: str = ""  # one name as listed without the key
    passed: bool = False
    explanation: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def prove_image(
    image: Path,
    marker: bytes,
    variant: str,
    encrypted: bool,
    names: tuple[list[str], list[str]] | None = None,
) -> ImageProof:
    """The marker a server wrote (write_marker; the server then stopped and the filesystem
    synced) must be in its raw image where the filesystem does not encrypt — the positive
    control, without which "not found" could mean a scan that cannot see — and absent where
    it does; there, the directory's names listed without the key (`names`: with the key, then
    without) must be none of the real ones.  Raises ProofError with the evidence."""
    result = ImageProof(variant, image.name, encrypted, marker_found=_contains(image, marker))
    problems = []
    if encrypted:
        if result.marker_found:
            problems.append(f"marker readable in the raw image {image.name}")
        if names is None:
            problems.append("its names were not listed without the key")
        else:
            real, hidden = names
            result.entries = len(real)
            result.names_readable_without_key = sorted(set(real) & set(hidden))
            result.example_without_key = hidden[0] if hidden else ""
            if result.names_readable_without_key:
                problems.append(
                    "names readable without the key: "
                    + ", ".join(result.names_readable_without_key)
                )
            if not real or len(hidden) != len(real):
                problems.append(
                    f"{len(real)} names with the key and {len(hidden)} without: the listing "
                    "does not show the same entries"
                )
    elif not result.marker_found:
        problems.append(
            f"marker not readable in the raw image {image.name} (the scan that finds nothing "
            "in the encrypted side's image must find it here)"
        )
    result.passed = not problems
    if problems:
        result.explanation = "; ".join(problems)
        claim = "encrypted by its filesystem" if encrypted else "on a plain filesystem"
        raise ProofError(
            f"the {variant} server is not {claim}: {result.explanation}; refusing to measure it"
        )
    result.explanation = (
        f"marker absent from the raw image; {result.entries} names, none readable without the key"
        if encrypted
        else "marker found in the raw image"
    )
    return result


def prove_images(
    pair: VolumePair,
    markers: dict[str, bytes],
    side: Callable[[str], str],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The filesystem layer's witnesses (prove_image) for each of the pair's volumes, once
    its server wrote `markers[variant]` and stopped (every page written, every file closed:
    the key can then be removed and added back to list the names without it); the
    filesystems are synced first.  Raises ProofError with the evidence."""
    os.sync()
    proofs = {}
    for variant, volume in pair.volumes.items():
        log(f"proving {side(variant)}'s filesystem below the server (raw image, names)")
        names = None
        if volume.encrypted:
            assert pair.key is not None
            names = volume.names_without_key(pair.key)
        proofs[variant] = prove_image(
            volume.image, markers[variant], side(variant), volume.encrypted, names
        ).to_json()
    return {"proofs": proofs}
