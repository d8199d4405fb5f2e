"""Bulk transfer over one connection (mariadb --quick, mariadb-dump), plain and TLS, against a
real sandboxed MariaDB 10.11; and unit tests of the argv and the rate, without a server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from encbench import proc
from encbench.errors import BadInput, ToolError
from encbench.servers import pki
from encbench.servers.mariadb import tls
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection
from encbench.workloads import bulk, connrate
from tests.helpers import processes_owned_by, skip_unless_ci
from tests.net.sandbox import tcp_sandbox
from tests.net.test_building_blocks import fake_pki

MB = 8


# -- unit tests (no server) -------------------------------------------------------------------
def test_the_client_argv_carries_tls_options_or_skip_ssl_and_never_the_password(
    tmp_path: Path,
) -> None:
    target = Connection.tcp("127.0.0.1", 3307, "bench", "sbtest")
    plain = bulk.connection_args(target, None)
    assert plain[0] == "--no-defaults"  # only honoured as the first option
    assert "--protocol=TCP" in plain and "--skip-ssl" in plain
    assert not [a for a in plain if a.startswith("--ssl")]
    made = fake_pki(tmp_path)
    encrypted = bulk.connection_args(target, made)
    assert "--skip-ssl" not in encrypted
    assert {"--ssl", "--ssl-verify-server-cert", f"--ssl-ca={made.ca_cert}"} <= set(encrypted)
    assert {f"--ssl-cert={made.client_cert}", f"--ssl-key={made.client_key}"} <= set(encrypted)
    assert not [a for a in plain + encrypted if a.startswith(("-p", "--password"))]


def test_the_rate_is_in_mib_per_second() -> None:
    assert bulk.BulkRead.of(2.0, 8 * 2**20) == bulk.BulkRead(2.0, 8 * 2**20, 4.0)
    assert bulk.BulkRead.of(0.0, 10).mb_per_s == 0.0


def test_a_row_source_is_at_most_one_chunk() -> None:
    with pytest.raises(ValueError, match="not a chunk"):
        bulk.row_source("sbtest", 1, bulk.CHUNK_ROWS + 1, sequence=False)
    assert "seq_1_to_10" in bulk.row_source("sbtest", 1, 10, sequence=True)


def test_bad_sizes_and_names_are_refused_before_any_sql() -> None:
    server = SandboxServer.__new__(SandboxServer)  # never started: any query would fail
    with pytest.raises(BadInput, match="> 0 MiB"):
        bulk.create_table(server, "sbtest", 0)
    with pytest.raises(BadInput, match="letters, digits"):
        bulk.create_table(server, "sb`; DROP", 1)


# -- integration -------------------------------------------------------------------------------
@dataclass
class Bench:
    server: SandboxServer
    pki: pki.Pki
    target: Connection
    password: str
    workdir: Path
    root: Path
    table: bulk.BulkTable


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    names = ("mariadbd", "mariadb-install-db", "openssl", "mariadb", "mariadb-dump")
    missing = [n for n in names if not proc.which(n)]
    if missing:
        skip_unless_ci(f"{', '.join(missing)} not installed: run `make setup`")
    root = tmp_path_factory.mktemp("bulk")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(root / "state"))
        made = pki.generate(root, "rsa2048")
        with tcp_sandbox(root, name="bulk", made=made, buffer_pool_mb=32) as box:
            workdir = root / "client"
            workdir.mkdir(mode=0o700)
            table = bulk.create_table(box.server, "sbtest", MB)
            yield Bench(box.server, made, box.target, box.password, workdir, root, table)
    assert not [p for p in processes_owned_by(os.getpid()) if "mariadb" in p]


@pytest.mark.integration
def test_the_table_holds_the_size_asked_for_and_a_second_call_keeps_it(bench: Bench) -> None:
    assert bench.table.rows == MB * 1024
    assert bench.table.payload_bytes == MB * 2**20 + 4 * bench.table.rows
    before = bench.server.query("CHECKSUM TABLE sbtest.encbench_bulk")
    assert bulk.create_table(bench.server, "sbtest", MB) == bench.table
    # Same random content: the table was kept, not refilled (nor appended to).
    assert bench.server.query("CHECKSUM TABLE sbtest.encbench_bulk") == before


@pytest.mark.integration
def test_the_cte_fallback_yields_the_same_rows_as_the_sequence_engine(bench: Bench) -> None:
    for sequence in (True, False) if bulk.sequence_loaded(bench.server) else (False,):
        for first, last in ((5, 5), (5, 65_540)):
            source = bulk.row_source("sbtest", first, last, sequence=sequence)
            sql = f"SELECT COUNT(*), COUNT(DISTINCT seq), MIN(seq), MAX(seq) FROM ({source}) r"
            rows = last - first + 1
            assert [int(v) for v in bench.server.query(sql)[0]] == [rows, rows, first, last]


def measured(bench: Bench, run: str, pki_: pki.Pki | None) -> tuple[bulk.BulkRead, int]:
    common = {
        "pki": pki_,
        "password": bench.password,
        "workdir": bench.workdir,
        "log": bench.root / f"{run}.log",
        "timeout_s": 120.0,
    }
    before = tls.counters(bench.server.global_status()).finished_accepts
    if run == "read":
        if pki_ is not None:
            pki.sysbench_dir(pki_, bench.workdir)
        report = connrate.run_tcp(
            bench.target,
            ssl=pki_ is not None,
            threads=1,
            time_s=1,
            workdir=bench.workdir,
            password=bench.password,
            log=bench.root / f"{run}.log",
            script=str(bulk.LUA_SCRIPT),
        )
        nbytes = report.transactions * bench.table.payload_bytes
        result = bulk.BulkRead(report.total_time_s, nbytes, nbytes / bulk.MIB / report.total_time_s)
    else:
        result = bulk.dump(bench.target, database="sbtest", **common)  # type: ignore[arg-type]
    return result, tls.counters(bench.server.global_status()).finished_accepts - before


@pytest.mark.integration
@pytest.mark.parametrize("run", ["read", "dump"])
def test_a_bulk_run_moves_the_table_plain_and_tls_with_proven_handshakes(
    bench: Bench, run: str, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, plain_handshakes = measured(bench, run, None)
    encrypted, tls_handshakes = measured(bench, run, bench.pki)
    assert plain_handshakes == 0
    # One connection per run: mariadb makes exactly one; mariadb-dump at least one.
    assert tls_handshakes == 1 if run == "read" else tls_handshakes >= 1
    for result in (plain, encrypted):
        assert result.bytes >= bench.table.payload_bytes and result.mb_per_s > 0
    assert not list(bench.workdir.glob("*.sql"))  # the dump file is measured, then deleted
    with capsys.disabled():
        print(
            f"\nbulk {run} {MB} MiB: plain {plain.mb_per_s:.0f} MiB/s, "
            f"TLS {encrypted.mb_per_s:.0f} MiB/s ({plain.bytes} / {encrypted.bytes} bytes)"
        )


@pytest.mark.integration
def test_a_refused_client_raises_with_the_tail_of_its_errors(bench: Bench) -> None:
    with pytest.raises(ToolError, match="exit") as caught:
        bulk.dump(
            bench.target,
            database="sbtest",
            pki=None,
            password="wrong",
            workdir=bench.workdir,
            log=bench.root / "refused.log",
            timeout_s=60,
        )
    assert "Access denied" in caught.value.tail
