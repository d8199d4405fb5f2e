"""encbench against a server it did not start: a sandbox started here, outside encbench,
plays the user's server (with file_key_management loaded, a TCP user with a password), and
each safety rule has its test: a foreign database of encbench's name, a read-only server,
missing privileges, no key plugin, and `plan` touching nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.studies.at_rest.table_sets import database_names
from tests.helpers import encbench, start_plain_server, tiny_profile
from tests.integration.users_server import PASSWORD, UsersServer, users_server, with_sshd


@pytest.fixture(scope="module")
def shared_users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UsersServer]:
    """The user's server, on another emulated host with a delayed link where the machine
    allows it (users_server.py): started once for the module's tests, as a user's server
    outlives the runs against it."""
    root = tmp_path_factory.mktemp("users")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(root / "state"))  # as conftest's state_dir
        with users_server(root) as found:
            yield found


@pytest.fixture
def users(shared_users: UsersServer, state_dir: Path) -> Iterator[UsersServer]:
    """The module's user's server as each test finds it: none of encbench's databases, not
    read-only, no extra user, their data intact — what a test changed is undone after it."""
    server = shared_users.server
    assert encbench_databases(server) == [] and theirs_unchanged(server)
    yield shared_users
    server.query("SET GLOBAL read_only = OFF")
    for name in encbench_databases(server):
        server.query(f"DROP DATABASE `{name}`")
    server.query(f"DROP USER IF EXISTS 'weak'@'{shared_users.client_addr}'")


def encbench_databases(server: SandboxServer) -> list[str]:
    rows = server.query("SHOW DATABASES LIKE 'encbench%'")
    return [str(r[0]) for r in rows]


def theirs_unchanged(server: SandboxServer) -> bool:
    return server.query("SELECT id FROM theirs.t") == [(42,)]


def test_a_run_against_a_users_server_measures_two_table_sets_and_drops_them(
    tmp_path: Path, users: UsersServer
) -> None:
    profile = tiny_profile(tmp_path / "p.toml", regimes='["in-memory", "io-bound"]')
    out = tmp_path / "out"
    result = users.run("run", str(profile), "--out", str(out), "--target", users.dsn())
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    assert all(r["server_cpu_s"] is None and r["cpu_ms_per_txn"] is None for r in runs)
    assert all(r["cell"]["regime"] == "in-memory" for r in runs)
    # Over the link every transaction (one point select) waits at least its round trip:
    # a lower bound the delay relay sets, so the runs went over the delayed link.
    assert all(r["latency_avg_ms"] >= users.rtt_ms for r in runs)
    record = json.loads((out / "at-rest.json").read_text())
    assert record["proofs"]["encrypted"]["tablespaces_encrypted"] == 1
    assert record["proofs"]["plain"]["tablespaces_encrypted"] == 0
    assert "oltp_point_select-io-bound-t2" in record["skipped"]
    report = (out / "report.md").read_text()
    assert "What this design cannot show" in report
    assert "not measured: io-bound needs a buffer pool" in report
    assert PASSWORD not in report and PASSWORD not in (out / "profile.toml").read_text()
    assert encbench_databases(users.server) == []
    assert theirs_unchanged(users.server)


def test_keep_leaves_its_databases_marked_as_its_own(tmp_path: Path, users: UsersServer) -> None:
    out = tmp_path / "out"
    result = users.run(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(out),
        "--target", users.dsn(), "--keep-databases",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    kept = sorted(database_names(str(out.absolute())).values())
    assert sorted(encbench_databases(users.server)) == kept
    comments = users.server.query(
        "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_NAME='encbench_owner'"
    )
    assert len(comments) == 2 and all(str(c[0]).startswith("encbench run ") for c in comments)


def refused(result: Any, words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert words in lines[-1], result.stderr
    assert "Traceback" not in result.stderr


def test_a_foreign_database_of_its_name_is_refused_and_left_alone(
    tmp_path: Path, users: UsersServer
) -> None:
    out = tmp_path / "out"
    name = database_names(str(out.absolute()))["plain"]
    users.server.query(f"CREATE DATABASE `{name}`")
    users.server.query(f"CREATE TABLE `{name}`.mine (id INT PRIMARY KEY) ENGINE=InnoDB")
    result = users.run(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(out), "--target", users.dsn()
    )
    refused(result, "is not this run's")
    assert encbench_databases(users.server) == [name]
    assert users.server.query(f"SHOW TABLES FROM `{name}`") == [("mine",)]


def test_a_read_only_server_is_refused_before_anything_is_created(
    tmp_path: Path, users: UsersServer
) -> None:
    users.server.query("SET GLOBAL read_only = ON")
    result = users.run(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
        "--target", users.dsn(),
    )  # fmt: skip
    refused(result, "read-only")
    assert encbench_databases(users.server) == []


def test_missing_privileges_are_refused_with_the_grant_that_fixes_them(
    tmp_path: Path, users: UsersServer
) -> None:
    users.add_user("weak", process=False)
    result = users.run(
        "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
        "--target", users.dsn("weak"),
    )  # fmt: skip
    refused(result, "GRANT PROCESS ON *.*")
    assert encbench_databases(users.server) == []


def test_a_server_without_a_key_plugin_is_refused(tmp_path: Path) -> None:
    server = start_plain_server(tmp_path / "plain-server", use_cgroup=False)
    try:
        server.query(f"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
        server.query("GRANT ALL ON `encbench\\_%`.* TO 'bench'@'127.0.0.1'")
        server.query("GRANT PROCESS ON *.* TO 'bench'@'127.0.0.1'")
        result = encbench(
            "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
            "--target", f"mysql://bench@127.0.0.1:{server.port}/", env={"MYSQL_PWD": PASSWORD},
        )  # fmt: skip
        refused(result, "no key management plugin")
        assert encbench_databases(server) == []
    finally:
        server.destroy()


def test_plan_prints_what_it_would_create_and_touches_nothing(
    tmp_path: Path, users: UsersServer
) -> None:
    before = users.server.query("SHOW DATABASES")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = users.run(
        "plan", str(tiny_profile(tmp_path / "p.toml")), "--target", users.dsn(), cwd=cwd
    )
    assert result.returncode == 0, result.stderr
    assert "every prerequisite holds" in result.stdout
    assert "CREATE DATABASE `encbench_" in result.stdout
    assert "ALTER TABLE" in result.stdout and "ENCRYPTED=YES" in result.stdout
    assert users.server.query("SHOW DATABASES") == before
    assert list(cwd.iterdir()) == []  # no results directory
    # A profile without the at-rest study plans none of its databases or checks.
    transit_only = tmp_path / "transit.toml"
    transit_only.write_text('name = "t"\nstudies = ["in-transit"]\n')
    result = users.run("plan", str(transit_only), "--target", users.dsn(), cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "in transit:" in result.stdout
    assert "_plain`" not in result.stdout and "every prerequisite holds" in result.stdout
    # Neither the at-rest proof's PROCESS nor a key plugin is asked for in transit.
    assert "PROCESS" not in result.stdout and "key management" not in result.stdout


def test_with_ssh_to_its_host_the_servers_cpu_is_read_there_per_run(
    tmp_path: Path, users: UsersServer
) -> None:
    with with_sshd(users, tmp_path) as users:
        out = tmp_path / "out"
        result = users.run(
            "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(out),
            "--target", users.dsn(ssh=True),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
        assert all(r["cpu_source"] == "ssh /proc/PID/stat" for r in runs)
        assert all(r["server_cpu_s"] is not None and r["server_cpu_s"] >= 0 for r in runs)
        # The server did work in every round; 10 ms ticks, so only the sum is sure to grow.
        assert sum(r["server_cpu_s"] for r in runs) > 0
        record = json.loads((out / "at-rest.json").read_text())
        assert f"of pid {users.server.pid} on users-host" in record["cpu_measurement"]
        assert "Server CPU: ssh /proc/PID/stat" in (out / "report.md").read_text()
        assert encbench_databases(users.server) == []


def test_an_ssh_host_that_refuses_the_user_stops_the_run_before_anything_is_created(
    tmp_path: Path, users: UsersServer
) -> None:
    with with_sshd(users, tmp_path) as users:
        dsn = users.dsn(ssh=True).replace("ssh=users-host", "ssh=nobody%40users-host")
        result = users.run(
            "run", str(tiny_profile(tmp_path / "p.toml")), "--out", str(tmp_path / "out"),
            "--target", dsn,
        )  # fmt: skip
        # Found at set-up, after the results directory was made: a failure (1), not status
        # 2, which promises that nothing was created; nothing was on the server.
        assert result.returncode == 1, result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert "ssh nobody@users-host for the server's CPU failed" in last
        assert "Traceback" not in result.stderr
        assert encbench_databases(users.server) == []
