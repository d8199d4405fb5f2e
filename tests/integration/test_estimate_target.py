"""`encbench estimate --target` against a server it did not start, under a light sysbench
load: the per-cause table and a total come out; the server's databases, users and global
variables are exactly as before; the password is never in a process's argv.  The user's
server is users_server.py's (another emulated host where namespaces can be made), its CPU
read over ssh where an sshd can be started there."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.estimate import units
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection
from encbench.workloads import sysbench
from tests import estimate_helpers
from tests.integration.users_server import PASSWORD, UsersServer, users_server, with_sshd

LOAD_DB = "their_load"
# Variables that move with any load, not with what the estimate does.
MOVING = frozenset({"gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos"})


def store_units() -> None:
    """Unit costs of the right size, so that the test needs no measured run."""
    units.write_machine(estimate_helpers.typical())


def snapshot(server: SandboxServer) -> dict[str, object]:
    """What the estimate must leave exactly as it was."""
    variables = dict(server.query("SHOW GLOBAL VARIABLES"))
    return {
        "databases": server.query("SHOW DATABASES"),
        "users": server.query("SELECT User, Host FROM mysql.user ORDER BY User, Host"),
        "variables": {k: v for k, v in variables.items() if k not in MOVING},
    }


@contextlib.contextmanager
def light_load(server: SandboxServer, root: Path, seconds: int) -> Iterator[None]:
    """sysbench oltp_read_write at 20 transactions/s over two connections, in the user's
    own database, through its socket as the OS user (their load, not encbench's)."""
    server.query(f"CREATE DATABASE {LOAD_DB}")
    conn = Connection.unix(server.paths.socket, server.user, LOAD_DB)
    sysbench.prepare(conn, tables=1, table_size=5000, log=root / "load-prepare.log", timeout_s=120)
    argv = sysbench.command(
        conn, "oltp_read_write", threads=2, time_s=seconds,
        options=["--tables=1", "--table-size=5000", "--rate=20"],
    )  # fmt: skip
    with open(root / "load.log", "wb") as log:
        load = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        if load.poll() is None:
            load.terminate()
        load.wait(timeout=30)


def passwords_in_argv() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if PASSWORD.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
    return found


def run_estimate(users: UsersServer, *args: str, cwd: Path) -> tuple[int, str, str, list[str]]:
    """encbench estimate as a user runs it, the password in MYSQL_PWD; meanwhile every
    process's argv is watched for the password."""
    process = subprocess.Popen(
        [*users.prefix, sys.executable, "-m", "encbench", "estimate", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
        env={**os.environ, "MYSQL_PWD": PASSWORD},
    )  # fmt: skip
    seen: list[str] = []
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        seen += passwords_in_argv()
        time.sleep(0.5)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err, seen


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UsersServer]:
    root = tmp_path_factory.mktemp("users")
    with users_server(root, buffer_pool_mb=8) as found:
        yield found


def _check_estimate(out: str, err: str, report_json: Path) -> dict[str, object]:
    assert "# What encryption would cost this server now" in out
    for row in ("| table reads |", "| table writes |", "| TLS handshakes |", "| TLS bytes |"):
        assert row in out, out
    assert "| **total** |" in out
    assert "## What this leaves out" in out and "Latency under saturation" in out
    assert err.count("estimate: ") >= 2  # a line of progress per 10 s
    data = json.loads(report_json.read_text())
    causes = {c["key"]: c for c in data["estimate"]["causes"]}
    # The load's queries move bytes: TLS on them costs something, and the total holds it.
    assert causes["tls_bytes"]["rate"]["value"] > 0
    assert causes["tls_bytes"]["cores"]["value"] > 0
    total = data["estimate"]["total"]["cores"]
    assert total["low"] <= total["value"] <= total["high"]
    assert total["value"] >= causes["tls_bytes"]["cores"]["value"]
    assert len(data["window"]["intervals"]) == 2
    assert PASSWORD not in out + err + report_json.read_text()
    return data


def test_an_estimate_reads_a_loaded_server_and_changes_nothing_there(
    tmp_path: Path, users: UsersServer, state_dir: Path
) -> None:
    store_units()
    before = snapshot(users.server)
    with light_load(users.server, tmp_path, seconds=120):
        time.sleep(2)  # the load under way
        after_load_started = snapshot(users.server)
        report = tmp_path / "estimate.json"
        code, out, err, seen = run_estimate(
            users, "--target", users.dsn(), "--seconds", "20", "--json", str(report),
            cwd=tmp_path,
        )  # fmt: skip
        assert code == 0, err
        assert snapshot(users.server) == after_load_started
    assert seen == [], "the password was in a process's argv"
    data = _check_estimate(out, err, report)
    assert data["window"]["server_cpu"].startswith("not read")
    assert "add ssh=USER@HOST" in out
    users.server.query(f"DROP DATABASE {LOAD_DB}")
    assert snapshot(users.server) == before


def test_with_ssh_its_cpu_and_its_hosts_cipher_speed_are_read_there(
    tmp_path: Path, users: UsersServer, state_dir: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the server's host's sshd needs root (its privilege separation directory)")
    store_units()
    with with_sshd(users, tmp_path) as users, light_load(users.server, tmp_path, seconds=120):
        before = snapshot(users.server)
        report = tmp_path / "estimate.json"
        code, out, err, seen = run_estimate(
            users, "--target", users.dsn(ssh=True), "--seconds", "20", "--json", str(report),
            "--scope", "all", cwd=tmp_path,
        )  # fmt: skip
        assert code == 0, err
        assert snapshot(users.server) == before
    users.server.query(f"DROP DATABASE {LOAD_DB}")
    assert seen == []
    data = _check_estimate(out, err, report)
    assert f"of pid {users.server.pid} on users-host" in str(data["window"]["server_cpu"])
    estimate = data["estimate"]
    assert isinstance(estimate, dict) and estimate["server_cores"] > 0
    assert estimate["total"]["share_pct"]["value"] > 0
    assert "| redo log |" in out  # in scope all
    rescaled = {u["name"]: u for u in data["units"]}
    assert all(u["rescaled"] for u in rescaled.values()), rescaled
    assert "on the server's host" in rescaled["page_read"]["how"]
