"""The proof's parts that need no server: the per-run check on the counters of a record, the
whole-file scan, and the restart proof's reading of INNODB_TABLESPACES_ENCRYPTION."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import ProofError
from encbench.proof import at_rest as proof
from encbench.studies.at_rest import run_proof
from encbench.studies.at_rest.records import CellKey, RunRecord

BASE = RunRecord(
    cell=CellKey("oltp_read_only", "io-bound", 4),
    round=3,
    variant="encrypted",
    position=0,
    session="s",
    started_at="t",
    wall_s=1.0,
    tps=100.0,
    qps=1600.0,
    transactions=100,
    ignored_errors=0,
    reconnects=0,
    latency_avg_ms=1.0,
    latency_p95_ms=2.0,
    latency_max_ms=3.0,
    server_cpu_s=0.5,
    cpu_ms_per_txn=5.0,
    harness_cpu_s=0.01,
    bp_read_requests=1000,
    bp_reads=200,
    pages_read=200,
    pages_written=0,
    raw_output="raw/x.txt",
    pages_decrypted=200,
)


def run(**changes: Any) -> RunRecord:
    return dataclasses.replace(BASE, **changes)


def test_an_encrypted_io_bound_run_that_decrypted_what_it_read_passes() -> None:
    run_proof.check_run(run(), writes=False)


def test_an_encrypted_io_bound_run_that_read_pages_and_decrypted_none_fails() -> None:
    with pytest.raises(ProofError, match="round 3: the encrypted run read 200 pages from disk"):
        run_proof.check_run(run(pages_decrypted=0), writes=False)


def test_an_encrypted_run_that_read_nothing_has_nothing_to_decrypt() -> None:
    run_proof.check_run(run(pages_read=0, pages_decrypted=0), writes=False)
    in_memory = CellKey("oltp_read_only", "in-memory", 4)
    run_proof.check_run(run(cell=in_memory, pages_read=3, pages_decrypted=0), writes=False)


def test_an_encrypted_write_run_that_wrote_pages_and_encrypted_none_fails() -> None:
    writes = CellKey("oltp_write_only", "in-memory", 4)
    run_proof.check_run(
        run(cell=writes, pages_read=0, pages_written=50, pages_encrypted=50), writes=True
    )
    with pytest.raises(ProofError, match="wrote 50 pages and encrypted none"):
        run_proof.check_run(
            run(cell=writes, pages_read=0, pages_written=50, pages_encrypted=0), writes=True
        )


@pytest.mark.parametrize(("decrypted", "encrypted"), [(1, 0), (0, 1)])
def test_a_plain_run_that_decrypted_or_encrypted_any_page_fails(
    decrypted: int, encrypted: int
) -> None:
    run_proof.check_run(run(variant="plain", pages_decrypted=0), writes=False)
    with pytest.raises(ProofError, match="the plain run decrypted"):
        run_proof.check_run(
            run(variant="plain", pages_decrypted=decrypted, pages_encrypted=encrypted), writes=False
        )


def test_on_a_shared_server_a_plain_run_may_encrypt_the_other_sets_pages_but_not_decrypt() -> None:
    # A user's server holds both table sets: the page cleaner flushes (encrypts) the
    # encrypted set's dirty pages during whichever run comes next.
    plain = run(variant="plain", pages_decrypted=0, pages_encrypted=40)
    run_proof.check_run(plain, writes=False, shared_server=True)
    with pytest.raises(ProofError, match="the plain run decrypted"):
        run_proof.check_run(plain, writes=False)
    with pytest.raises(ProofError, match="the plain run decrypted 3"):
        run_proof.check_run(replace_decrypted(plain, 3), writes=False, shared_server=True)


def replace_decrypted(record: RunRecord, pages: int) -> RunRecord:
    return dataclasses.replace(record, pages_decrypted=pages)


def test_the_scan_reads_the_whole_file_past_the_old_64_mib_limit(tmp_path: Path) -> None:
    path = tmp_path / "ib_logfile0"
    with open(path, "wb") as f:
        f.truncate(65 << 20)
        f.seek(65 << 20)
        f.write(b"ENCBENCH-MARKER-0123456789abcdef")
    assert proof._contains(path, b"ENCBENCH-MARKER-0123456789abcdef")
    assert not proof._contains(path, b"ENCBENCH-MARKER-fedcba9876543210")


@pytest.mark.parametrize("offset", range(90, 101))
def test_a_needle_across_a_chunk_boundary_is_found(tmp_path: Path, offset: int) -> None:
    row = b"12345678901-12345678901-12345678901-12345678901"
    path = tmp_path / "sbtest1.ibd"
    path.write_bytes(b"\0" * offset + row + b"\0" * 50)
    # 100-byte chunks: with these offsets the row starts before the boundary and ends after
    assert proof._contains(path, row, chunk_bytes=100)
    assert proof._contains(path, re.compile(rb"\d{11}-\d{11}-\d{11}-\d{11}"), chunk_bytes=100)


class Tablespaces:
    """What INNODB_TABLESPACES_ENCRYPTION answers, for the restart proof."""

    database = "sbtest"

    def __init__(self, schemes: dict[str, int]) -> None:
        self.rows = [(f"sbtest/{name}", scheme) for name, scheme in schemes.items()]

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        return list(self.rows)


def test_the_restart_proof_passes_a_server_as_it_was_proven() -> None:
    every = {"encbench_proof": 1, "sbtest1": 1, "sbtest2": 1}
    evidence = proof.prove_tablespaces(Tablespaces(every), "encrypted", 2)  # type: ignore[arg-type]
    assert evidence == {"tablespaces_checked": 3, "tablespaces_encrypted": 3, "passed": True}
    assert proof.prove_tablespaces(Tablespaces({}), "plain", 2)["passed"]  # type: ignore[arg-type]


def test_the_restart_proof_fails_a_server_that_came_back_different() -> None:
    one_plain = {"encbench_proof": 1, "sbtest1": 1, "sbtest2": 0}
    with pytest.raises(ProofError, match="not encrypted per the server: sbtest2"):
        proof.prove_tablespaces(Tablespaces(one_plain), "encrypted", 2)  # type: ignore[arg-type]
    with pytest.raises(ProofError, match="encrypted per the server: encbench_proof, sbtest1"):
        proof.prove_tablespaces(Tablespaces(one_plain), "plain", 2)  # type: ignore[arg-type]


def test_the_control_of_scope_tables_is_held_to_an_encrypted_runs_counters() -> None:
    """Scope all against scope tables: the plain role's tables are encrypted, so its runs
    must decrypt what they read like an encrypted run, and may encrypt."""
    control = run(variant="plain")
    run_proof.check_run(control, writes=False, control_encrypts=True)
    with pytest.raises(ProofError, match="the plain run read 200 pages from disk"):
        run_proof.check_run(run(variant="plain", pages_decrypted=0), False, control_encrypts=True)
    # Against plain, as always: a plain run that decrypted fails.
    with pytest.raises(ProofError, match="plain must do neither"):
        run_proof.check_run(control, writes=False)
