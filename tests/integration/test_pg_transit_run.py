"""PostgreSQL in transit with a real server: the sandbox on its own (a data directory of the
server's user, 0700, a server that is not root, sysbench's PostgreSQL driver speaking to it,
nothing left once destroyed), the tiny
profile through the CLI with both sides of every run proven (run by root: its distance cells
across two network namespaces, and every cell's wire captured), and `encbench clean` after a
run killed outright."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import psutil
import pytest

from encbench import proc
from encbench.net import netns
from encbench.servers import postgresql, registry
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.studies.at_rest import postgresql_oltp as oltp
from encbench.studies.at_rest.records import CellKey
from tests.helpers import (
    encbench,
    namespaces_left,
    processes_owned_by,
    run_cli,
    server_of_a_killed_run,
    skip_unless_ci,
)


@pytest.fixture(autouse=True)
def postgresql_installed() -> None:
    if postgresql.bindir() is None:
        skip_unless_ci("PostgreSQL is not installed: run scripts/setup-test-extras.sh")


def processes_naming(path: Path) -> list[str]:
    """Live processes whose command line names `path` (a data directory)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(path) in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{process.pid} {cmdline}")
    return found


def test_the_sandbox_runs_its_server_unprivileged_on_a_private_data_directory(
    open_dir: Path, state_dir: Path
) -> None:
    server = PgSandbox("pg", open_dir / "sandbox")
    try:
        server.initialize("host all all 127.0.0.1/32 reject")
        server.start(pg_sandbox.server_settings(32))
        mode = server.datadir.stat()
        assert stat.S_IMODE(mode.st_mode) == 0o700 and mode.st_uid == server.user.uid
        assert psutil.Process(server.pid).uids().real == server.user.uid
        if os.geteuid() == 0:
            assert server.user.name == "postgres" and server.user.uid != 0
        assert server.query("SELECT 1") == [["1"]]
        assert server.query("SHOW port") == [[str(server.port)]]
        # sysbench's PostgreSQL driver speaks to it over its socket directory (the
        # PostgreSQL at-rest study's oltp_* cells).
        server.execute("CREATE DATABASE sb")
        oltp.prepare(server, "sb", 1, 1000, open_dir / "prepare.log", 60)
        cell = CellKey("oltp_read_only", "in-memory", 2, layer="fs", kind="postgresql")
        got = oltp.run(server, "sb", cell, 1, 1000, 1, open_dir / "run.log", server.admin_env())
        assert got.tps > 0 and got.transactions > 0 and got.ignored_errors == 0
        assert server.query("SELECT count(*) FROM sbtest1", database="sb") == [["1000"]]
        [entry] = registry.entries()
        assert entry.kind == registry.POSTGRESQL and entry.datadir == str(server.datadir)
        assert registry.server_running(entry)
        pid = server.pid
    finally:
        server.destroy()
    assert proc.wait_gone(pid, 10)
    assert processes_naming(server.datadir) == []
    assert not (open_dir / "sandbox").exists() and not server.socket_dir.exists()
    assert registry.entries() == []


def test_the_tiny_profile_proves_both_sides_of_every_run_and_leaves_nothing(
    open_dir: Path, state_dir: Path
) -> None:
    out = open_dir / "out"
    result, pid = run_cli(
        "run", "postgresql-tiny", "--out", str(out), state_dir=state_dir, timeout=600
    )
    assert result.returncode == 0, result.stderr

    lines = (out / "in-transit.jsonl").read_text().splitlines()
    runs = [json.loads(line) for line in lines if line.strip()]
    assert {run["cell"]["kind"] for run in runs} == {"postgresql"}
    # new connections, persistent ones and the copy, each at 2 TLS versions, and by root the
    # new connections at RTT 2 ms too (a distance needs namespaces); 2 rounds × 2 sides
    root = os.geteuid() == 0
    cells = 8 if root else 6
    assert len(runs) == cells * 2 * 2
    assert {run["cell"]["test"] for run in runs} == {"connect_select1", "select_only", "copy"}
    far = [run for run in runs if run["cell"].get("rtt_ms")]
    assert len(far) == (2 * 2 * 2 if root else 0)
    assert all(run["cell"]["test"] == "connect_select1" for run in far)
    # A new connection at 2 ms pays at least TCP's handshake and the query: two round trips.
    assert all(run["latency_avg_ms"] >= 2 * 2 for run in far)
    for run in runs:
        cell = run["cell"]
        persistent = cell["test"] == "select_only"
        assert run["connections"] >= (2 if persistent else run["events"])
        if run["variant"] == "plain":
            assert run["tls_handshakes"] == 0 and run["negotiated"] == ""
        else:
            assert run["tls_handshakes"] == run["connections"]
            assert run["negotiated"].startswith(f"{cell['tls_version']} ")
        raw = (out / run["raw_output"]).read_text()
        assert ("copies/s: " if cell["test"] == "copy" else "tps = ") in raw
    record = json.loads((out / "in-transit.json").read_text())["postgresql"]
    proofs = record["proofs"]
    assert len(proofs) == cells
    for found in proofs.values():
        assert found["plain"] == "plain" and found["encrypted"].startswith("TLSv1.")
    assert {p["encrypted"].split()[0] for p in proofs.values()} == {"TLSv1.2", "TLSv1.3"}
    # The wire of every cell, each side captured on the link its client used.
    wire = record["wire"]
    assert set(wire) == set(proofs)
    for slug, seen in wire.items():
        if not root:
            assert seen["plain"].startswith("not captured")
            continue
        version = proofs[slug]["encrypted"].split()[0]
        assert seen["plain"].startswith("query text in clear (")
        assert seen["encrypted"].startswith(f"SSLRequest, then TLS ({version} ")
        assert "no query text in clear" in seen["encrypted"]
    captures = sorted((out / "raw").glob("*.capture.json"))
    assert len(captures) == (2 * cells if root else 0)
    for capture in captures:
        findings = json.loads(capture.read_text())
        assert findings["dropped"] == 0 and findings["payload_bytes"] > 0

    report = (out / "report.md").read_text()
    assert "In transit: what TLS costs connections, queries and bulk transfers" in report
    assert "New connections: connect, SELECT 1, disconnect (pgbench -C)" in report
    if root:
        assert record["delay_method"]["2"] in ("netem", "relay")
        assert "### PostgreSQL: rate lost to TLS, by network distance" in report
        assert "RTT 2 ms" in report and "On the wire:" in report
        link = record["link"]["id"]  # PostgreSQL's own link, in its part of the record
        assert not [n for n in netns.namespaces() if link in n]
        devices = proc.run(["ip", "-o", "link", "show"], phase="ip link", timeout_s=30).stdout
        assert f"encb{link}" not in devices
    assert namespaces_left(state_dir) == []
    server_log = (out / "logs" / "pg-transit-postgresql.log").read_text()
    assert "connection authorized" not in server_log

    assert processes_owned_by(pid) == []
    assert processes_naming(out) == []
    assert not (out / "sandbox").exists() and not (out / "private").exists()
    assert registry.entries() == []


LOOPBACK_ONLY = """name = "pg-loopback"
studies = ["in-transit"]
[server]
kinds = ["postgresql"]
[pg_transit]
tests = ["connect_select1"]
key_types = ["ecdsa-p256"]
sslmodes = ["require"]
shared_buffers_mb = 32
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
interference_max_pct = 100
"""


def test_without_a_distance_the_wire_is_captured_on_the_hosts_own_loopback(
    open_dir: Path, state_dir: Path
) -> None:
    """No namespace is made: the capture reads this host's loopback, kept to the server's
    port among whatever else crosses it."""
    if os.geteuid() != 0:
        pytest.skip("a capture needs root")
    profile = open_dir / "loopback.toml"
    profile.write_text(LOOPBACK_ONLY)
    out = open_dir / "out"
    result, pid = run_cli("run", str(profile), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "in-transit.json").read_text())
    assert "link" not in record and "link" not in record["postgresql"]
    [seen] = record["postgresql"]["wire"].values()
    assert seen["plain"].startswith("query text in clear (")
    assert seen["encrypted"].startswith("SSLRequest, then TLS (TLSv1.3 ")
    assert processes_owned_by(pid) == [] and namespaces_left(state_dir) == []


BOTH_KINDS = """name = "both-kinds"
studies = ["in-transit"]
[server]
kinds = ["mariadb", "postgresql"]
[transit]
tests = ["connect"]
key_types = ["ecdsa-p256"]
connect_threads = [1]
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = 2
interference_max_pct = 100
""" + LOOPBACK_ONLY.split("\n", 4)[4]


def test_one_run_measures_both_kinds_into_one_file_and_part(
    open_dir: Path, state_dir: Path
) -> None:
    """`[server] kinds` names both: MariaDB's cells, then PostgreSQL's, by one runner into
    one results file and part of summary.json, each run proven, nothing left."""
    profile = open_dir / "both.toml"
    profile.write_text(BOTH_KINDS)
    out = open_dir / "out"
    result, pid = run_cli("run", str(profile), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr
    lines = (out / "in-transit.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["cell"].get("kind", "mariadb") for line in lines if line.strip()]
    assert kinds == ["mariadb"] * 4 + ["postgresql"] * 4
    record = json.loads((out / "in-transit.json").read_text())
    for part in (record, record["postgresql"]):
        [proof] = part["proofs"].values()
        assert proof
    assert not (out / "pg-in-transit.jsonl").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert "pg-in-transit" not in summary["studies"]
    cells = summary["studies"]["in-transit"]["cells"]
    assert [c["kind"] for c in cells] == ["mariadb", "postgresql"]
    assert all(c["rounds"] == 2 for c in cells)
    report = (out / "report.md").read_text()
    assert "## In transit" in report and "PostgreSQL in-transit setup and proof" in report
    assert processes_owned_by(pid) == [] and processes_naming(out) == []
    assert registry.entries() == []


_KILLED_RUN = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from encbench.servers.postgresql.sandbox import PgSandbox, server_settings\n"
    "server = PgSandbox('pg', Path(sys.argv[1]))\n"
    "server.initialize('')\n"
    "server.start(server_settings(32))\n"
    "print(server.pid, flush=True)\n"
    "os.kill(os.getpid(), 9)\n"
)


def test_clean_stops_the_postgres_of_a_run_killed_outright(open_dir: Path, state_dir: Path) -> None:
    root = open_dir / "sandbox"
    pid = server_of_a_killed_run(root, state_dir, _KILLED_RUN)
    assert proc.pid_alive(pid)
    [entry] = registry.entries()
    assert entry.kind == registry.POSTGRESQL

    cleaned = encbench("clean", env={"XDG_STATE_HOME": str(state_dir)}, timeout=120)
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"stopped pg (pid {pid})" in cleaned.stdout
    assert proc.wait_gone(pid, 30)
    assert processes_naming(root) == []
    assert not root.exists() and not Path(entry.socket_dir).exists()
    assert registry.entries() == []


def test_a_results_directory_the_servers_user_cannot_reach_is_refused_before_anything(
    tmp_path: Path, state_dir: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only a run by root starts the server as another user")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    result = encbench(
        "run",
        "postgresql-tiny",
        "--out",
        str(closed / "out"),
        env={"XDG_STATE_HOME": str(state_dir)},
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "`postgres` user" in lines[0] and "chmod o+x" in lines[0]
    assert list(closed.iterdir()) == []
