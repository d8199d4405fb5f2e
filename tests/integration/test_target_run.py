"""encbench against a server it did not start: a sandbox started here, outside encbench,
plays the user's server (with file_key_management loaded, a TCP user with a password), and
each safety rule has its test: a foreign database of encbench's name, a read-only server,
missing privileges, no key plugin, and `plan` touching nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from encbench.servers import keys
from encbench.servers.sandbox import SandboxServer
from encbench.servers.variants import EncryptionSpec, server_options
from encbench.studies.at_rest.table_sets import database_names
from tests.helpers import encbench, start_plain_server, tiny_profile

PASSWORD = "not-a-real-secret-7"
ALL_ON_OURS = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX"


def add_user(server: Any, name: str, process: bool = True) -> None:
    server.query(f"CREATE USER '{name}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
    server.query(f"GRANT {ALL_ON_OURS} ON `encbench\\_%`.* TO '{name}'@'127.0.0.1'")
    if process:
        server.query(f"GRANT PROCESS ON *.* TO '{name}'@'127.0.0.1'")


@pytest.fixture
def users_server(tmp_path: Path) -> Iterator[SandboxServer]:
    """A server with a key management plugin, as a user would run one."""
    server = SandboxServer("users", tmp_path / "users-server", use_cgroup=False)
    opts = server_options(
        "encrypted",
        EncryptionSpec(),
        server.paths,
        port=server.port,
        buffer_pool_mb=64,
        key_file=keys.key_file(keys.private_dir(tmp_path)),
        run_as_root=os.geteuid() == 0,
    )
    server.initialize(opts)
    server.start(opts)
    add_user(server, "bench")
    # Someone else's data on the same server: never touched.
    server.query("CREATE DATABASE theirs")
    server.query("CREATE TABLE theirs.t (id INT PRIMARY KEY) ENGINE=InnoDB")
    server.query("INSERT INTO theirs.t VALUES (42)")
    try:
        yield server
    finally:
        server.destroy()


def dsn(server: SandboxServer, user: str = "bench") -> str:
    return f"mysql://{user}@127.0.0.1:{server.port}/"


def encbench_databases(server: SandboxServer) -> list[str]:
    rows = server.query("SHOW DATABASES LIKE 'encbench%'")
    return [str(r[0]) for r in rows]


def theirs_unchanged(server: SandboxServer) -> bool:
    return server.query("SELECT id FROM theirs.t") == [(42,)]


ENV = {"MYSQL_PWD": PASSWORD}


def test_a_run_against_a_users_server_measures_two_table_sets_and_drops_them(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    profile = tiny_profile(tmp_path / "p.toml", regimes='["in-memory", "io-bound"]')
    out = tmp_path / "out"
    result = encbench(
        "run", str(profile), "--out", str(out), "--target", dsn(users_server), env=ENV
    )
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    assert all(r["server_cpu_s"] is None and r["cpu_ms_per_txn"] is None for r in runs)
    assert all(r["cell"]["regime"] == "in-memory" for r in runs)
    record = json.loads((out / "at-rest.json").read_text())
    assert record["proofs"]["encrypted"]["tablespaces_encrypted"] == 1
    assert record["proofs"]["plain"]["tablespaces_encrypted"] == 0
    assert "oltp_point_select-io-bound-t2" in record["skipped"]
    report = (out / "report.md").read_text()
    assert "What this design cannot show" in report
    assert "not measured: io-bound needs a buffer pool" in report
    assert PASSWORD not in report and PASSWORD not in (out / "profile.toml").read_text()
    assert encbench_databases(users_server) == []
    assert theirs_unchanged(users_server)


def test_keep_leaves_its_databases_marked_as_its_own(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    out = tmp_path / "out"
    result = encbench(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(out),
        "--target", dsn(users_server), "--keep", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    kept = sorted(database_names(str(out.absolute())).values())
    assert sorted(encbench_databases(users_server)) == kept
    comments = users_server.query(
        "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_NAME='encbench_owner'"
    )
    assert len(comments) == 2 and all(str(c[0]).startswith("encbench run ") for c in comments)


def refused(result: Any, words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert words in lines[-1], result.stderr
    assert "Traceback" not in result.stderr


def test_a_foreign_database_of_its_name_is_refused_and_left_alone(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    out = tmp_path / "out"
    name = database_names(str(out.absolute()))["plain"]
    users_server.query(f"CREATE DATABASE `{name}`")
    users_server.query(f"CREATE TABLE `{name}`.mine (id INT PRIMARY KEY) ENGINE=InnoDB")
    result = encbench(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(out),
        "--target", dsn(users_server), env=ENV,
    )  # fmt: skip
    refused(result, "is not this run's")
    assert encbench_databases(users_server) == [name]
    assert users_server.query(f"SHOW TABLES FROM `{name}`") == [("mine",)]


def test_a_read_only_server_is_refused_before_anything_is_created(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    users_server.query("SET GLOBAL read_only = ON")
    result = encbench(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
        "--target", dsn(users_server), env=ENV,
    )  # fmt: skip
    refused(result, "read-only")
    assert encbench_databases(users_server) == []


def test_missing_privileges_are_refused_with_the_grant_that_fixes_them(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    add_user(users_server, "weak", process=False)
    result = encbench(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
        "--target", dsn(users_server, "weak"), env=ENV,
    )  # fmt: skip
    refused(result, "GRANT PROCESS ON *.*")
    assert encbench_databases(users_server) == []


def test_a_server_without_a_key_plugin_is_refused(tmp_path: Path) -> None:
    server = start_plain_server(tmp_path / "plain-server", use_cgroup=False)
    try:
        add_user(server, "bench")
        result = encbench(
            "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
            "--target", dsn(server), env=ENV,
        )  # fmt: skip
        refused(result, "no key management plugin")
        assert encbench_databases(server) == []
    finally:
        server.destroy()


def test_plan_prints_what_it_would_create_and_touches_nothing(
    tmp_path: Path, users_server: SandboxServer
) -> None:
    before = users_server.query("SHOW DATABASES")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = encbench(
        "plan", str(tiny_profile(tmp_path / "p.toml")), "--target", dsn(users_server),
        env=ENV, cwd=cwd,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "every prerequisite holds" in result.stdout
    assert "CREATE DATABASE `encbench_" in result.stdout
    assert "ALTER TABLE" in result.stdout and "ENCRYPTED=YES" in result.stdout
    assert users_server.query("SHOW DATABASES") == before
    assert list(cwd.iterdir()) == []  # no results directory
