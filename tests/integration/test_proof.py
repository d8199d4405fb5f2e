"""The proof, both ways, on real servers: and a tampered variant fails it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.errors import ProofError
from encbench.proof import at_rest as proof
from encbench.servers import keys
from encbench.servers.mariadb.options import server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection
from encbench.servers.variants import EncryptionSpec, Variant
from encbench.workloads import sysbench

TABLES = 2


def start_filled(root: Path, name: str, options_of: Variant, spec: EncryptionSpec) -> SandboxServer:
    server = SandboxServer(name, root / name)
    opts = server_options(
        options_of,
        spec,
        server.paths,
        port=server.port,
        buffer_pool_mb=32,
        key_file=keys.key_file(keys.private_dir(root)),
        run_as_root=os.geteuid() == 0,
    )
    server.initialize(opts)
    server.start(opts)
    server.query("CREATE DATABASE sbtest")
    sysbench.prepare(
        Connection.unix(server.paths.socket, server.user, "sbtest"),
        tables=TABLES,
        table_size=2000,
        log=root / f"{name}-prepare.log",
        timeout_s=120,
    )
    return server


@pytest.fixture
def servers(tmp_path: Path, state_dir: Path) -> Iterator[list[SandboxServer]]:
    started: list[SandboxServer] = []
    yield started
    for server in started:
        server.destroy()


@pytest.mark.parametrize("scope", ["tables", "all"])
def test_plain_is_proven_plain_and_encrypted_proven_encrypted(
    tmp_path: Path, servers: list[SandboxServer], scope: str
) -> None:
    spec = EncryptionSpec(scope=scope)  # type: ignore[arg-type]
    plain = start_filled(tmp_path, "plain", "plain", spec)
    servers.append(plain)
    encrypted = start_filled(tmp_path, "encrypted", "encrypted", spec)
    servers.append(encrypted)

    p = proof.prove(plain, "plain", spec, TABLES)
    assert p.passed
    assert p.tablespaces_encrypted == 0
    assert "encbench_proof.ibd" in p.marker_found_in
    assert p.sysbench_rows_found_in == ["sbtest1.ibd", "sbtest2.ibd"]

    e = proof.prove(encrypted, "encrypted", spec, TABLES)
    assert e.passed
    assert e.tablespaces_encrypted == e.tablespaces_checked == TABLES + 1
    assert e.marker_found_in == []
    assert e.sysbench_rows_found_in == []
    if scope == "all":
        assert "ib_logfile0" in e.files_scanned
        assert any(name.startswith("binlog.") for name in e.files_scanned)
        # the same marker shows in plain's redo log: the scan can see it when it is there
        assert "ib_logfile0" in p.marker_found_in


def test_the_control_of_scope_tables_is_proven_with_its_tables_encrypted_and_logs_plain(
    tmp_path: Path, servers: list[SandboxServer]
) -> None:
    """Scope all against scope tables: the control's tables are encrypted and its logs
    plain — the marker readable in its redo and binary logs, the positive control of the
    other side's log scan; a server of scope all posing as that control fails."""
    spec = EncryptionSpec(scope="all", against="tables")
    control = start_filled(tmp_path, "control", "plain", spec)
    servers.append(control)
    c = proof.prove(control, "encrypted", spec, TABLES, logs_claimed="plain")
    assert c.passed and c.tablespaces_encrypted == c.tablespaces_checked == TABLES + 1
    assert c.sysbench_rows_found_in == []
    assert "ib_logfile0" in c.marker_found_in
    assert any(name.startswith("binlog.") for name in c.marker_found_in)
    assert not any(name.endswith(".ibd") for name in c.marker_found_in)
    assert c.explanation.endswith("marker absent from the raw table files, found in the logs")
    posing = start_filled(tmp_path, "posing", "encrypted", spec)
    servers.append(posing)
    with pytest.raises(ProofError, match="not encrypted with plain logs: marker not readable"):
        proof.prove(posing, "encrypted", spec, TABLES, logs_claimed="plain", name="posing")


def test_a_server_claiming_encryption_without_it_fails_the_proof(
    tmp_path: Path, servers: list[SandboxServer]
) -> None:
    spec = EncryptionSpec()
    tampered = start_filled(tmp_path, "encrypted", "plain", spec)  # plain options, wrong name
    servers.append(tampered)
    with pytest.raises(ProofError, match=r"not encrypted per the server.*marker readable"):
        proof.prove(tampered, "encrypted", spec, TABLES)


def test_a_server_claiming_to_be_plain_while_encrypted_fails_the_proof(
    tmp_path: Path, servers: list[SandboxServer]
) -> None:
    spec = EncryptionSpec()
    tampered = start_filled(tmp_path, "plain", "encrypted", spec)
    servers.append(tampered)
    with pytest.raises(ProofError, match="encrypted per the server"):
        proof.prove(tampered, "plain", spec, TABLES)


def test_a_provisioned_pair_has_no_account_reachable_over_tcp(
    tmp_path: Path, state_dir: Path
) -> None:
    """Issue #8: no unused TCP superuser — every at-rest client uses the unix socket, so a
    provisioned pair holds no account for a TCP host, and no password exists to leak."""
    from encbench.profiles import profile as profiles
    from encbench.results.store import ResultStore
    from encbench.studies.at_rest.pair import ServerPair

    toml = 'name = "t"\n[data]\ntables = 1\ntable_size = 1000\n'
    prof = profiles.parse(toml, "t.toml")
    store = ResultStore.create(tmp_path / "out", prof.name, toml)
    with ServerPair(store, prof) as pair:
        pair.provision(lambda line: None)
        for variant, server in pair.servers.items():
            hosts = {
                row[0] for row in server.query("SELECT Host FROM mysql.user WHERE is_role = 'N'")
            }
            assert hosts <= {"localhost"}, f"{variant} has accounts for {hosts}"
