"""encbench against a live MySQL 9.7 it did not start: a server from the private root
(`scripts/setup.sh mysql`, encbench/machine/roots.py) started as a DBA would, its keyring component
active, TLS with the certificates MySQL generated itself, a login with a password under
MySQL's default authentication (caching_sha2_password) and a database of the user's own.
At rest (ENCRYPTION='Y' table sets), in transit (its own TLS) and the estimate each run
against it; the report names MySQL, the user's data and variables are as they were, and the
password is on no command line and in no file of the results."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.estimate import units
from encbench.machine import roots
from encbench.servers.mariadb import installs
from encbench.servers.mariadb.options import common_options
from encbench.servers.mariadb.sandbox import SandboxServer
from tests import estimate_helpers
from tests.helpers import files_holding, skip_unless_ci, tiny_profile

LOGIN = "bench"
TRANSIT = """name = "mysql-transit"
studies = ["in-transit"]
[transit]
tests = ["connect", "oltp_point_select"]
key_types = ["rsa2048"]
tls_version = "TLSv1.3"
methods = ["tls"]
connect_threads = [1]
query_threads = [2]
table_size = 1000
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
cell_budget_s = 60
interference_max_pct = 100
"""
# Variables that move with any load, not with what encbench does.
MOVING = frozenset({"gtid_executed", "gtid_purged"})


class UsersMysql:
    def __init__(self, server: SandboxServer, password: str) -> None:
        self.server = server
        self.password = password

    def dsn(self, tls_files: bool = False) -> str:
        base = f"mysql://{LOGIN}@127.0.0.1:{self.server.port}/"
        if not tls_files:
            return base
        d = self.server.paths.datadir
        return (
            f"{base}?ssl-ca={d / 'ca.pem'}&ssl-cert={d / 'client-cert.pem'}"
            f"&ssl-key={d / 'client-key.pem'}"
        )

    def snapshot(self) -> dict[str, object]:
        variables = dict(self.server.query("SHOW GLOBAL VARIABLES"))
        return {
            "databases": self.server.query("SHOW DATABASES"),
            "users": self.server.query("SELECT User, Host FROM mysql.user ORDER BY 1, 2"),
            "theirs": self.server.query("SELECT id FROM theirs.t"),
            "variables": {k: v for k, v in variables.items() if k not in MOVING},
        }

    def run(
        self, *args: str, timeout: float = 600
    ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        """encbench as a user runs it, the password in MYSQL_PWD; every process's command
        line is watched for the password meanwhile."""
        process = subprocess.Popen(
            [sys.executable, "-m", "encbench", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "MYSQL_PWD": self.password},
        )  # fmt: skip
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            seen += self._in_argv()
            time.sleep(0.2)
        out, err = process.communicate(timeout=60)
        done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        return done, seen

    def _in_argv(self) -> list[str]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if self.password.encode() in (entry / "cmdline").read_bytes():
                        found.append(entry.name)
        return found


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UsersMysql]:
    root = roots.find("mysql")
    if root is None:
        skip_unless_ci(roots.missing_why("mysql"))
    assert root is not None
    base = tmp_path_factory.mktemp("users-mysql")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(base / "state"))  # as conftest's state_dir
        # A DBA's MySQL, started as encbench starts its own (from the same root): its
        # keyring component loaded (default_table_encryption among its options), its
        # tables plain by default, TLS with the certificates it generated, a binary log.
        server = SandboxServer(
            "users-mysql",
            base / "server",
            install=installs.of("mysql"),
            keyring=base / "private" / "keyring",
        )
        options = common_options(
            server.paths, port=server.port, buffer_pool_mb=128,
            run_as_root=os.geteuid() == 0, binlog=True,
        )  # fmt: skip
        options |= {"performance_schema": "ON", "default_table_encryption": "OFF"}
        try:
            server.initialize(options)
            server.start(options)
            password = secrets.token_urlsafe(18)
            server.query("CREATE USER %s@'%%' IDENTIFIED BY %s", (LOGIN, password))
            server.query(f"GRANT ALL ON *.* TO `{LOGIN}`@'%'")
            server.query("CREATE DATABASE theirs")
            server.query("CREATE TABLE theirs.t (id INT PRIMARY KEY)")
            server.query("INSERT INTO theirs.t VALUES (42)")
            yield UsersMysql(server, password)
        finally:
            server.destroy()


def test_at_rest_on_a_users_mysql_measures_encryption_y_table_sets_and_names_mysql(
    tmp_path: Path, users: UsersMysql
) -> None:
    before = users.snapshot()
    profile = tiny_profile(tmp_path / "p.toml")
    planned, _ = users.run("plan", str(profile), "--target", users.dsn(), timeout=120)
    assert planned.returncode == 0, planned.stderr
    assert "server: MySQL 9.7" in planned.stdout
    assert "ready: every prerequisite holds" in planned.stdout
    assert "DEFAULT ENCRYPTION='Y'" in planned.stdout
    assert "creates on this host: only its results directory" in planned.stdout

    out = tmp_path / "out"
    result, seen = users.run("run", str(profile), "--target", users.dsn(), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert seen == [], "the password was on a command line"
    assert files_holding(out, users.password) == []
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    record = json.loads((out / "at-rest.json").read_text())
    assert record["target"]["family"] == "MySQL"
    assert record["target"]["key_plugins"] == ["component_keyring_file"]
    proofs = record["proofs"]
    assert (
        proofs["encrypted"]["tablespaces_encrypted"] == proofs["encrypted"]["tablespaces_checked"]
    )
    assert proofs["plain"]["tablespaces_encrypted"] == 0
    server = json.loads((out / "summary.json").read_text())["servers"]["at-rest"]
    assert server["kind"] == "mariadb" and server["name"] == "MySQL"
    assert server["version"].startswith("9.7.")
    report = (out / "report.md").read_text()
    assert "MySQL 9.7" in report and "MariaDB 9.7" not in report
    assert "ENCRYPTION='Y'" in report and "ENCRYPTED=YES" not in report
    assert "INFORMATION_SCHEMA.INNODB_TABLESPACES (ENCRYPTION)" in report
    # MySQL counts no pages through its cipher: no floor is drawn from counts it lacks.
    assert "The cipher's floor" not in report
    assert users.snapshot() == before


def test_in_transit_on_a_users_mysql_proves_each_tls_connection_with_its_own_certificates(
    tmp_path: Path, users: UsersMysql
) -> None:
    before = users.snapshot()
    profile = tmp_path / "transit.toml"
    profile.write_text(TRANSIT)
    out = tmp_path / "out"
    result, seen = users.run(
        "run", str(profile), "--target", users.dsn(tls_files=True), "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert seen == []
    runs = [json.loads(line) for line in (out / "in-transit.jsonl").read_text().splitlines()]
    assert {r["cell"]["test"] for r in runs} == {"connect", "oltp_point_select"}
    for r in runs:
        if r["variant"] == "encrypted":
            assert r["tls_handshakes"] >= 1
        else:
            assert r["tls_handshakes"] == 0
    record = json.loads((out / "in-transit.json").read_text())
    assert record["target"]["family"] == "MySQL"
    proofs = record["proofs"]
    assert proofs and all(p["plain"] == "plain" for p in proofs.values())
    assert all(p["encrypted"].startswith("TLSv1.3 ") for p in proofs.values())
    server = json.loads((out / "summary.json").read_text())["servers"]["in-transit"]
    assert server["name"] == "MySQL" and server["version"].startswith("9.7.")
    report = (out / "report.md").read_text()
    assert "(MySQL 9.7" in report and "MySQL 9.7" in report.split("Software:")[1]
    assert "the target's TLS" in report
    assert files_holding(out, users.password) == []
    assert users.snapshot() == before


def test_the_estimate_reads_a_users_mysql_and_says_what_it_encrypts_now(
    tmp_path: Path, users: UsersMysql
) -> None:
    units.write_machine(estimate_helpers.typical())
    before = users.snapshot()
    report_json = tmp_path / "estimate.json"
    result, seen = users.run(
        "estimate", "--target", users.dsn(), "--seconds", "10", "--json", str(report_json),
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert seen == []
    out = result.stdout
    assert "(MySQL 9.7" in out
    assert "| TLS handshakes |" in out and "have_ssl" not in out
    data = json.loads(report_json.read_text())
    on_now = data["on_now"]
    assert on_now["table_reads"] == "no"  # default_table_encryption OFF
    assert on_now["redo_log"] == "no" and on_now["binary_log"] == "no"
    assert users.password not in out + result.stderr + report_json.read_text()
    assert users.snapshot() == before
