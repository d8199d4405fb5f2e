"""MySQL 9.7 as the sandboxes of the at-rest and in-transit studies (`[server] install =
"mysql"`).  At rest: two servers from its private root, the encrypted one with
default_table_encryption and the keyring component (its keyring file 0600 in the run's
private directory), each proven by its tablespaces and raw files; every run paired, the report
naming MySQL and saying that its runs are not proven one by one.  In transit: one server with
the run's own certificates, each connection proven by the server's Ssl_version/Ssl_cipher and
each run by its handshake counter.  Nothing left running."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import (
    encbench,
    encbench_here,
    need_root,
    running_from,
    server_of_a_killed_run,
    tiny_profile,
)


@pytest.fixture(autouse=True)
def root_built() -> None:
    need_root("mysql")


def test_mysql_sandboxes_measure_table_encryption_with_their_proofs(
    tmp_path: Path, state_dir: Path
) -> None:
    # In memory only (the suite's time): the pool's size comes from the data's, which
    # MySQL's statistics give only once fresh (the data's size is checked below).
    # Scope `all`: the tables and MySQL's logs (redo, undo, binary log).
    profile = tiny_profile(tmp_path / "p.toml")
    profile.write_text(
        profile.read_text() + '[server]\ninstall = "mysql"\nencryption_scope = "all"\n'
    )
    out = tmp_path / "out"
    result = encbench("run", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    assert {r["cell"]["regime"] for r in runs} == {"in-memory"}
    assert all(r["pages_decrypted"] == 0 for r in runs)  # MySQL counts none
    record = json.loads((out / "at-rest.json").read_text())
    assert record["family"] == "MySQL" and record["mariadb_version"].startswith("9.7.")
    assert record["data"]["size_mb"] > 0  # fresh statistics, not MySQL's cached zero
    assert record["encryption"]["key_provider"] == "keyring-file"
    proofs = record["proofs"]
    assert (
        proofs["encrypted"]["tablespaces_encrypted"] == proofs["encrypted"]["tablespaces_checked"]
    )
    assert proofs["plain"]["tablespaces_encrypted"] == 0
    assert proofs["encrypted"]["marker_found_in"] == []
    # Plain shows the marker in its table, its redo log and its binary log: the scan sees.
    found = proofs["plain"]["marker_found_in"]
    assert "encbench_proof.ibd" in found
    assert any(name.startswith("#ib_redo") for name in found)
    assert any(name.startswith("binlog.") for name in found)
    assert any(name.startswith("#ib_redo") for name in proofs["encrypted"]["files_scanned"])
    # MySQL's own account of its logs.
    assert proofs["encrypted"]["logs_encrypted"] == {"redo": True, "undo": True, "binlog": True}
    assert proofs["plain"]["logs_encrypted"] == {"redo": False, "undo": False, "binlog": False}
    assert record["option_difference"] == {
        "default_table_encryption": "ON",
        "innodb_redo_log_encrypt": "ON",
        "innodb_undo_log_encrypt": "ON",
        "binlog_encryption": "ON",
    }
    server = json.loads((out / "summary.json").read_text())["servers"]["at-rest"]
    assert server["name"] == "MySQL" and server["version"].startswith("9.7.")
    report = (out / "report.md").read_text()
    assert "MySQL 9.7." in report.split("Software:")[1]
    assert "Encryption: component_keyring_file, AES-256 (MySQL's only)" in report
    assert "MySQL counts no pages through the cipher" in report
    assert "The cipher's floor" not in report
    assert running_from(out) == []


TRANSIT = """name = "mysql-transit"
studies = ["in-transit"]
[server]
install = "mysql"
[transit]
tests = ["connect", "connect_first", "oltp_point_select"]
key_types = ["rsa2048"]
tls_version = "TLSv1.2"
ciphers = ["ECDHE-RSA-AES128-GCM-SHA256"]
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


def test_a_mysql_sandbox_measures_its_own_tls_with_each_connection_proven(
    tmp_path: Path, state_dir: Path
) -> None:
    profile = tmp_path / "transit.toml"
    profile.write_text(TRANSIT)
    out = tmp_path / "out"
    result = encbench("run", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "in-transit.jsonl").read_text().splitlines()]
    assert {r["cell"]["test"] for r in runs} == {"connect", "connect_first", "oltp_point_select"}
    for r in runs:
        # The server's own handshake counter: one per TLS connection, none for plain.
        if r["variant"] == "encrypted":
            assert r["tls_handshakes"] >= 1
        else:
            assert r["tls_handshakes"] == 0
    record = json.loads((out / "in-transit.json").read_text())
    assert record["install"]["name"] == "mysql"
    # The one TLS 1.2 suite the server was limited to, as the server negotiated it (the
    # first logins' row runs beside it, with the server's default).
    assert {p["encrypted"] for p in record["proofs"].values()} >= {
        "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256"
    }
    assert {p["plain"] for p in record["proofs"].values()} == {"plain"}
    server = json.loads((out / "summary.json").read_text())["servers"]["in-transit"]
    assert server["name"] == "MySQL" and server["version"].startswith("9.7.")
    report = (out / "report.md").read_text()
    assert "| MySQL TLS rsa2048 ECDHE-RSA-AES128-GCM-SHA256 |" in report
    assert "Server: MySQL 9.7." in report and "MariaDB TLS" not in report
    # First logins: one TLS handshake per connection, each a user's own full login.
    first = [r for r in runs if r["cell"]["test"] == "connect_first"]
    assert all(r["events"] > 0 for r in first)
    assert all(r["tls_handshakes"] == r["events"] for r in first if r["variant"] == "encrypted")
    assert "### First logins" in report
    assert running_from(out) == []


def test_what_mysql_sandboxes_do_not_measure_yet_is_refused_in_one_line(tmp_path: Path) -> None:
    for extra, words in (
        ('studies = ["at-rest", "operations"]\n', "operations not (this host"),
        ('[server]\nencryption_layer = "fs"\n', 'layer "tde"'),
        ('[server]\nencryption_algorithm = "AES_CBC"\n', "one cipher"),
    ):
        profile = tmp_path / "p.toml"
        text = 'name = "x"\n' + extra
        text += 'install = "mysql"\n' if "[server]" in extra else '[server]\ninstall = "mysql"\n'
        profile.write_text(text)
        result = encbench_here("plan", str(profile))
        assert result.returncode == 2, result.stdout
        [line] = result.stderr.strip().splitlines()
        assert words in line, line


def test_clean_stops_the_mysql_server_of_a_run_that_was_killed(
    tmp_path: Path, state_dir: Path
) -> None:
    # Killed with SIGKILL, the run could not stop its MySQL: it outlives the run.
    root = tmp_path / "sandbox"
    server_pid = server_of_a_killed_run(root, state_dir, install="mysql")
    os.kill(server_pid, 0)
    cleaned = encbench("clean", env={"XDG_STATE_HOME": str(state_dir)}, timeout=120)
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"stopped plain (pid {server_pid})" in cleaned.stdout
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(server_pid, 0)
            time.sleep(0.1)
    assert not root.exists()
