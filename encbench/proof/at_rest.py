"""Proof, not trust: each variant is shown to be what it claims before it is measured.

Two independent witnesses:
1. The server's own account: INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION must list every
   sbtest table (and the proof table) with ENCRYPTION_SCHEME=1 and background encryption
   finished for `encrypted`, and none of them encrypted for `plain`.
2. The bytes on disk: a random marker string is written into a proof table and flushed with
   FLUSH TABLES … FOR EXPORT; it must be readable in the raw .ibd file of `plain` and absent
   from that of `encrypted`.  sysbench's own rows (the `c` column's digit groups,
   ###########-###########-…) must likewise be visible in plain sbtest*.ibd files and
   invisible in encrypted ones.  With scope `all`, the redo log and binary logs of
   `encrypted` must not contain the marker either.

The second witness needs the data directory (servers/target.py): on a target whose files are
not readable from here it is not run, and the result says so instead of passing silently.

An A/A calibration proves both servers plain (both witnesses, as for `plain`), and that
their options are the same (`prove_twins`): the pair differs in nothing but its own paths.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from encbench.errors import ProofError
from encbench.servers.target import Needs, Target
from encbench.servers.variants import EncryptionSpec, option_difference

PROOF_TABLE = "encbench_proof"
SYSBENCH_ROW = re.compile(rb"\d{11}-\d{11}-\d{11}-\d{11}")
SCAN_LIMIT_BYTES = 64 << 20  # a plain sbtest file shows rows within its first pages
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _contains(path: Path, needle: bytes | re.Pattern[bytes]) -> bool:
    with open(path, "rb") as f:
        data = f.read(SCAN_LIMIT_BYTES)
    if isinstance(needle, bytes):
        return needle in data
    return needle.search(data) is not None


def write_marker(server: Target, tables: int) -> bytes:
    marker = f"ENCBENCH-MARKER-{secrets.token_hex(8)}"
    db = server.database
    with server.cursor(database=db) as cur:
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {PROOF_TABLE} "
            "(id INT PRIMARY KEY, marker VARCHAR(64)) ENGINE=InnoDB"
        )
        cur.execute(f"REPLACE INTO {PROOF_TABLE} VALUES (1, %s)", (marker,))
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


def encryption_schemes(server: Target, tables: int) -> dict[str, int]:
    """ENCRYPTION_SCHEME per table; a table without crypt data counts as 0 (not encrypted)."""
    rows = server.query(
        "SELECT NAME, ENCRYPTION_SCHEME FROM information_schema.INNODB_TABLESPACES_ENCRYPTION "
        "WHERE NAME LIKE %s",
        (f"{server.database}/%",),
    )
    by_name = {str(name): int(scheme) for name, scheme in rows}
    names = [PROOF_TABLE] + [f"sbtest{i}" for i in range(1, tables + 1)]
    return {n: by_name.get(f"{server.database}/{n}", 0) for n in names}


def prove(
    server: Target, claimed: str, spec: EncryptionSpec, tables: int, name: str | None = None
) -> ProofResult:
    """Check both witnesses (the second where the target's files are readable); raise
    ProofError (with the evidence) when the claim is false.  `name` is how messages call the
    server (a calibration's "B (plain twin)"); by default its claim."""
    if claimed == "encrypted":
        wait_background_encryption(server)
    marker = write_marker(server, tables)
    schemes = encryption_schemes(server, tables)
    result = ProofResult(
        variant=claimed,
        tablespaces_checked=len(schemes),
        tablespaces_encrypted=sum(1 for s in schemes.values() if s == 1),
    )
    result.not_proven = RAW_FILES.missing(server)
    files: list[Path] = []
    if server.datadir is not None:
        dbdir = server.datadir / server.database
        files = [dbdir / f"{PROOF_TABLE}.ibd"]
        files += [dbdir / f"sbtest{i}.ibd" for i in range(1, tables + 1)]
        if spec.scope == "all":
            logs = sorted(server.datadir.glob("ib_logfile*"))
            files += logs + sorted(server.datadir.glob("binlog.[0-9]*"))
    for path in files:
        result.files_scanned.append(path.name)
        if _contains(path, marker):
            result.marker_found_in.append(path.name)
        if path.name.startswith("sbtest") and _contains(path, SYSBENCH_ROW):
            result.sysbench_rows_found_in.append(path.name)

    problems = []
    sbtest_files = [f.name for f in files if f.name.startswith("sbtest")]
    if claimed == "encrypted":
        unencrypted = [n for n, s in schemes.items() if s != 1]
        if unencrypted:
            problems.append(f"not encrypted per the server: {', '.join(unencrypted)}")
        if result.marker_found_in:
            problems.append(f"marker readable in {', '.join(result.marker_found_in)}")
        if result.sysbench_rows_found_in:
            problems.append(f"sysbench rows readable in {', '.join(result.sysbench_rows_found_in)}")
    else:
        encrypted = [n for n, s in schemes.items() if s == 1]
        if encrypted:
            problems.append(f"encrypted per the server: {', '.join(encrypted)}")
        if files and f"{PROOF_TABLE}.ibd" not in result.marker_found_in:
            problems.append(f"marker not readable in {PROOF_TABLE}.ibd")
        missing = sorted(set(sbtest_files) - set(result.sysbench_rows_found_in))
        if missing:
            problems.append(f"sysbench rows not readable in {', '.join(missing)}")
    result.passed = not problems
    if problems:
        result.explanation = "; ".join(problems)
        raise ProofError(
            f"the {name or claimed} server is not {claimed}: {result.explanation}. "
            "Its options are in at-rest.json; refusing to measure it."
        )
    result.explanation = (
        f"{result.tablespaces_encrypted}/{result.tablespaces_checked} tablespaces encrypted; "
        + (
            f"marker {'absent from' if claimed == 'encrypted' else 'found in'} raw files"
            if files
            else "; ".join(result.not_proven)
        )
    )
    return result


def prove_twins(a: dict[str, str], b: dict[str, str]) -> None:
    """An A/A pair's options: identical but for each sandbox's own paths and port."""
    differ = option_difference(a, b) | option_difference(b, a)
    if differ:
        raise ProofError(
            "the calibration's two servers differ in "
            + ", ".join(f"{k}" for k in sorted(differ))
            + ": an A/A calibration needs identical servers; refusing to measure them"
        )
