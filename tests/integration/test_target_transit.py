"""In transit against a server encbench did not start: plain TCP and TLS to the user's own
server (users_server.py: another emulated host, a delayed link, the user's CA and client
certificate), what cannot be measured there skipped with its reason, nothing left behind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.servers.mariadb.sandbox import SandboxServer
from tests.integration.users_server import PASSWORD, UsersServer, users_server, with_sshd

PROFILE = """name = "tiny-transit"
studies = ["in-transit"]
[transit]
tests = ["connect", "oltp_point_select"]
key_types = ["rsa2048", "ecdsa-p256"]
tls_version = "TLSv1.3"
methods = ["tls", "ssh"]
connect_threads = [1]
query_threads = [2]
rtt_ms = [0, 40]
table_size = 1000
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
cell_budget_s = 60
interference_max_pct = 100
"""


@pytest.fixture(scope="module")
def shared_users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UsersServer]:
    """The user's server (users_server.py): started once for the module's tests, which only
    connect to it and measure."""
    root = tmp_path_factory.mktemp("users")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(root / "state"))  # as conftest's state_dir
        with users_server(root) as found:
            yield found


@pytest.fixture
def users(shared_users: UsersServer, state_dir: Path) -> Iterator[UsersServer]:
    """The module's user's server, as each test must find it: none of encbench's databases
    (a test's run drops its own; one a failed test left is dropped after it), their data
    intact."""
    server = shared_users.server
    assert encbench_databases(server) == []
    assert server.query("SELECT id FROM theirs.t") == [(42,)]
    yield shared_users
    for name in encbench_databases(server):
        server.query(f"DROP DATABASE `{name}`")


def encbench_databases(server: SandboxServer) -> list[str]:
    return [str(r[0]) for r in server.query("SHOW DATABASES LIKE 'encbench%'")]


def test_plain_and_tls_to_a_users_server_are_measured_and_the_rest_skipped_with_reasons(
    tmp_path: Path, users: UsersServer
) -> None:
    profile = tmp_path / "transit.toml"
    profile.write_text(PROFILE)
    out = tmp_path / "out"
    result = users.run(
        "run", str(profile), "--out", str(out), "--target", users.dsn(tls_files=True)
    )
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "in-transit.jsonl").read_text().splitlines()]
    measured = {r["cell"]["test"] for r in runs}
    assert measured == {"connect", "oltp_point_select"}
    assert all(r["cell"]["key_type"] == "target" and r["cell"]["rtt_ms"] == 0 for r in runs)
    assert all(r["server_cpu_s"] is None for r in runs)
    for r in runs:
        # The server's own handshake counter: every TLS connection, and none for plain.
        if r["variant"] == "encrypted":
            assert r["tls_handshakes"] >= 1
        else:
            assert r["tls_handshakes"] == 0
    queries = [r for r in runs if r["cell"]["test"] == "oltp_point_select"]
    # One point select waits at least the link's round trip (the relay's lower bound).
    assert all(r["latency_avg_ms"] >= users.rtt_ms for r in queries)

    record = json.loads((out / "in-transit.json").read_text())
    assert "rsaEncryption, 2048 bit" in record["pki"]["target"]["server_key"]
    assert "0 (ok)" in record["pki"]["target"]["chain"]
    proofs = record["proofs"]
    assert all(p["plain"] == "plain" for p in proofs.values())
    assert all(p["encrypted"].startswith("TLSv1.3 ") for p in proofs.values())
    skipped = record["skipped"]
    assert any("ssh needs its server end" in why for why in skipped.values())
    assert any("other key types" in why for slug, why in skipped.items() if "ecdsa" in slug)
    assert any("distance" in why for slug, why in skipped.items() if "rtt40" in slug)

    report = (out / "report.md").read_text()
    assert "the user's own" in report
    assert "not measured" in report
    assert PASSWORD not in report and PASSWORD not in (out / "profile.toml").read_text()
    assert encbench_databases(users.server) == []
    assert users.server.query("SELECT id FROM theirs.t") == [(42,)]


def test_without_a_client_certificate_the_tls_rows_say_why_they_were_not_measured(
    tmp_path: Path, users: UsersServer
) -> None:
    profile = tmp_path / "transit.toml"
    profile.write_text(PROFILE.replace('methods = ["tls", "ssh"]', 'methods = ["tls"]'))
    out = tmp_path / "out"
    result = users.run("run", str(profile), "--out", str(out), "--target", users.dsn())
    assert result.returncode == 0, result.stderr
    assert not (out / "in-transit.jsonl").exists() or not (
        (out / "in-transit.jsonl").read_text().strip()
    )
    skipped = json.loads((out / "in-transit.json").read_text())["skipped"]
    measurable = [why for slug, why in skipped.items() if "-target-" in slug and "rtt0" in slug]
    assert measurable and all("ssl_ca" in why for why in measurable)
    assert encbench_databases(users.server) == []


def test_with_ssh_to_its_host_the_servers_cpu_per_connection_is_measured(
    tmp_path: Path, users: UsersServer
) -> None:
    profile = tmp_path / "transit.toml"
    profile.write_text(
        PROFILE.replace('methods = ["tls", "ssh"]', 'methods = ["tls"]')
        .replace('key_types = ["rsa2048", "ecdsa-p256"]', 'key_types = ["rsa2048"]')
        .replace("rtt_ms = [0, 40]", "rtt_ms = [0]")
        .replace('tests = ["connect", "oltp_point_select"]', 'tests = ["connect"]')
    )
    with with_sshd(users, tmp_path) as users:
        out = tmp_path / "out"
        dsn = users.dsn(tls_files=True, ssh=True)
        result = users.run("run", str(profile), "--out", str(out), "--target", dsn)
        assert result.returncode == 0, result.stderr
        runs = [json.loads(line) for line in (out / "in-transit.jsonl").read_text().splitlines()]
        assert runs and all(r["server_cpu_s"] is not None for r in runs)
        # A TLS handshake per connection: the encrypted side's server did work.
        assert sum(r["server_cpu_s"] for r in runs if r["variant"] == "encrypted") > 0
        record = json.loads((out / "in-transit.json").read_text())
        assert "ssh /proc/PID/stat" in record["cpu_measurement"]
