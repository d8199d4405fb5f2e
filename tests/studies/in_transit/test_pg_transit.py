"""The PostgreSQL in-transit study without a server: pgbench's report read, its options
refused in one line, its cells, its per-run proof, its report on made-up records, and the
sandbox's pieces that need no server (password file, SCRAM verifier, libpq settings, the
way to the data directory).  The registry's kinds: tests/servers/test_registry_kinds.py."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import itertools
import json
import os
import random
import stat
from collections import Counter
from pathlib import Path

import pytest

from encbench.commands import rendering
from encbench.errors import BadInput, ProofError, ToolError
from encbench.profiles import profile as profiles
from encbench.report import markdown
from encbench.report.tables import Document
from encbench.results.store import ResultStore
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql import sessions
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.in_transit import postgresql_clients as pgbench
from encbench.studies.in_transit import postgresql_proof as proof
from encbench.studies.in_transit import report as pg_report
from encbench.studies.in_transit import section
from encbench.studies.in_transit import summary as pg_summary
from encbench.studies.in_transit.records import TransitRecord
from encbench.workloads import pgbench_report
from tests.helpers import encbench_here
from tests.studies.in_transit.pg_records import pg_cell, run_record

CONNECTING = """pgbench (15.14 (Debian 15.14-0+deb12u1))
transaction type: /tmp/x/pg-select1.sql
scaling factor: 1
query mode: simple
number of clients: 1
number of threads: 1
maximum number of tries: 1
duration: 1 s
number of transactions actually processed: 412
number of failed transactions: 0 (0.000%)
latency average = 2.427 ms
average connection time = 2.151 ms
tps = 411.925107 (including reconnection times)
"""
PERSISTENT = """pgbench (15.14 (Debian 15.14-0+deb12u1))
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 4
maximum number of tries: 1
duration: 1 s
number of transactions actually processed: 30211
number of failed transactions: 0 (0.000%)
latency average = 0.132 ms
initial connection time = 9.874 ms
tps = 30313.415922 (without initial connection time)
"""
# pgbench 13 and older: two tps lines and no connection time.
OLDER = """number of transactions actually processed: 500
latency average = 2.000 ms
tps = 499.5 (including connections establishing)
tps = 510.25 (excluding connections establishing)
"""


def load(body: str) -> profiles.Profile:
    return profiles.parse(
        'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'
        f"[pg_transit]\n{body}",
        "t",
    )


# -- pgbench ----------------------------------------------------------------------------------
def test_pgbench_reports_are_read_with_and_without_reconnecting() -> None:
    got = pgbench.parse(CONNECTING, reconnecting=True)
    assert (got.transactions, got.failed, got.tps) == (412, 0, 411.925107)
    assert (got.latency_avg_ms, got.connection_ms) == (2.427, 2.151)
    kept = pgbench.parse(PERSISTENT, reconnecting=False)
    assert (kept.transactions, kept.tps, kept.connection_ms) == (30211, 30313.415922, 9.874)
    # Older pgbench: with -C the figure including connecting, without it the other one.
    assert pgbench.parse(OLDER, reconnecting=True).tps == 499.5
    assert pgbench.parse(OLDER, reconnecting=False).tps == 510.25
    assert pgbench.parse(OLDER, reconnecting=False).connection_ms == 0.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "transactions processed"),
        (CONNECTING.replace("latency average", "latency"), "latency average"),
        (CONNECTING.replace("tps =", "tps:"), "tps"),
        (CONNECTING.replace("processed: 412", "processed: 0"), "0 transactions"),
    ],
)
def test_a_pgbench_report_without_its_figures_is_refused_by_name(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pgbench.parse(text, reconnecting=True)


def test_a_pgbench_run_without_figures_fails_as_the_client_with_its_output(
    tmp_path: Path,
) -> None:
    """What a study's run reports: the cell, what is missing and the end of the output."""
    log = tmp_path / "run.log"
    argv = ["sh", "-c", "echo 'pgbench: connection ok'; echo 'latency average = 1.0 ms'"]
    with pytest.raises(ToolError, match="one cell: pgbench's report has no transactions") as got:
        pgbench_report.run(argv, "one cell", 5, dict(os.environ), log, reconnecting=True)
    assert "connection ok" in (got.value.tail or "")
    assert "connection ok" in log.read_text()


def test_pgbench_reconnects_only_for_the_connect_tests_and_runs_select_1_only_for_one() -> None:
    def args(test: str) -> list[str]:
        cell = pg_cell(test, "require", "rsa2048", "TLSv1.3", 4)
        return pgbench.argv(cell, 3, Path("s.sql"))[1:]

    assert args("connect_select1") == ["-n", "-T", "3", "-c", "4", "-j", "4", "-C", "-f", "s.sql"]
    assert args("connect_select_only") == ["-n", "-T", "3", "-c", "4", "-j", "4", "-C", "-S"]
    assert args("select_only") == ["-n", "-T", "3", "-c", "4", "-j", "4", "-S"]


# -- options ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('key_types = ["rsa1024"]', "pg_transit.key_types: unknown TLS key type 'rsa1024'"),
        ('tests = ["connect"]', "pg_transit.tests"),
        ('sslmodes = ["prefer"]', "pg_transit.sslmodes"),
        ('tls_versions = ["TLSv1.1"]', "pg_transit.tls_versions"),
        ("scale = 0", "pg_transit.scale: 0 is out of range"),
        ("copy_mb = 5000", "pg_transit.copy_mb: 5000 is out of range"),
        ("query_clients = [600]", "pg_transit.query_clients"),
        ('sslmodes = ["require", "require"]', "listed twice"),
        ("table_size = 10", "unknown key"),
    ],
)
def test_a_bad_pg_transit_value_is_refused_in_one_line_naming_it(body: str, words: str) -> None:
    with pytest.raises(BadInput) as refused:
        load(body)
    message = str(refused.value)
    assert words in message and "\n" not in message


def test_the_cli_refuses_a_bad_pg_transit_profile_with_exit_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "bad"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'
        '[pg_transit]\nsslmodes = ["allow"]\n'
    )
    result = encbench_here("plan", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pg_transit.sslmodes" in lines[0], result.stderr


def test_a_calibration_of_the_study_is_refused() -> None:
    with pytest.raises(BadInput, match="no A/A calibration"):
        profiles.parse(
            'name = "t"\ncalibration = true\nstudies = ["in-transit"]\n'
            '[server]\nkinds = ["postgresql"]\n',
            "t",
        )


# -- cells ------------------------------------------------------------------------------------
def test_the_key_types_and_sslmodes_apply_where_they_change_the_set_up() -> None:
    prof = load(
        'tests = ["connect_select1", "connect_select_only", "select_only", "copy"]\n'
        'key_types = ["ecdsa-p256", "rsa4096"]\ntls_versions = ["TLSv1.3", "TLSv1.2"]\n'
        'sslmodes = ["verify-full", "require"]\nconnect_clients = [1]\nquery_clients = [1, 8]\n'
    )
    cells = transit_cells.postgresql_cells(prof)
    by_test = Counter(c.test for c in cells)
    # select1: 2 keys × 2 versions × 2 modes; select-only per connection: the first key;
    # per query: the first key and mode, 2 versions × 2 client counts; copy: one client.
    assert by_test == {"connect_select1": 8, "connect_select_only": 4, "select_only": 4, "copy": 2}
    assert {c.key_type for c in cells if c.test != "connect_select1"} == {"ecdsa-p256"}
    assert {c.sslmode for c in cells if c.test in ("select_only", "copy")} == {"verify-full"}
    assert {c.threads for c in cells if c.test == "copy"} == {1}
    # One server configuration after another, in the profile's order.
    groups = [transit_cells.pg_server_tls(c) for c in cells]
    assert list(dict.fromkeys(groups)) == [
        ("ecdsa-p256", "TLSv1.3"),
        ("ecdsa-p256", "TLSv1.2"),
        ("rsa4096", "TLSv1.3"),
        ("rsa4096", "TLSv1.2"),
    ]
    assert [k for k, _ in itertools.groupby(groups)] == list(dict.fromkeys(groups))
    assert len({c.slug for c in cells}) == len(cells)


def test_a_profile_without_the_study_has_none_of_its_cells() -> None:
    assert transit_cells.postgresql_cells(profiles.parse('name = "t"\n', "t")) == []


# -- proof ------------------------------------------------------------------------------------
AUTHORIZED = "2026-11-26 01:00:00.002 UTC [{pid}] LOG:  connection authorized: user={user}"
TLS13 = " SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)"
BENCH = " database=encbench application_name=pgbench"
LOG = "\n".join(
    [
        "2026-11-26 01:00:00.001 UTC [101] LOG:  connection received: host=127.0.0.1 port=4001",
        AUTHORIZED.format(pid=101, user="encbench_bench") + BENCH + TLS13,
        AUTHORIZED.format(pid=102, user="encbench_admin") + " database=postgres",
        AUTHORIZED.format(pid=103, user="encbench_bench") + BENCH,
        AUTHORIZED.format(pid=104, user="encbench_bench") + BENCH + TLS13,
        "",
    ]
)


def test_the_servers_log_counts_the_benchmark_roles_connections_and_their_tls() -> None:
    seen = sessions.logged_connections(LOG, "encbench_bench")
    assert (seen.connections, seen.tls) == (3, 2)
    assert seen.words() == "TLSv1.3 TLS_AES_256_GCM_SHA384 256 bits"
    assert sessions.logged_connections(LOG, "nobody").connections == 0


def test_a_session_is_read_from_pg_stat_ssl_and_judged_by_its_side() -> None:
    cell = pg_cell("select_only", "require", "rsa2048", "TLSv1.2", 1)
    tls = sessions.parse_session("t\tTLSv1.2\tECDHE-RSA-AES256-GCM-SHA384\t256\n")
    plain = sessions.parse_session("f\t\t\t0\n")
    assert proof.prove_session(cell, "encrypted", tls) == (
        "TLSv1.2 ECDHE-RSA-AES256-GCM-SHA384 256 bits"
    )
    assert proof.prove_session(cell, "plain", plain) == "plain"
    with pytest.raises(ProofError, match="sees TLS"):
        proof.prove_session(cell, "plain", tls)
    with pytest.raises(ProofError, match="no TLS"):
        proof.prove_session(cell, "encrypted", plain)
    with pytest.raises(ProofError, match=r"not TLSv1\.3"):
        proof.prove_session(dataclasses.replace(cell, tls_version="TLSv1.3"), "encrypted", tls)
    with pytest.raises(ProofError, match="no row"):
        sessions.parse_session("")


CONNECT = pg_cell("connect_select1", "verify-full", "rsa2048", "TLSv1.3", 1)


def test_every_run_is_proven_against_the_servers_log() -> None:
    proof.check_run(run_record(CONNECT, "plain"))
    proof.check_run(run_record(CONNECT, "encrypted"))
    with pytest.raises(ProofError, match="were TLS"):
        proof.check_run(run_record(CONNECT, "plain", tls_handshakes=1))
    with pytest.raises(ProofError, match="1 of 401 connections were not TLS"):
        proof.check_run(run_record(CONNECT, "encrypted", tls_handshakes=400))
    with pytest.raises(ProofError, match="expected at least 400"):
        proof.check_run(run_record(CONNECT, "encrypted", connections=10, tls_handshakes=10))
    with pytest.raises(ProofError, match=r"negotiated TLSv1\.2"):
        proof.check_run(run_record(CONNECT, "encrypted", negotiated="TLSv1.2 X 256 bits"))
    # Persistent connections: one per client is enough.
    persistent = pg_cell("select_only", "require", "rsa2048", "TLSv1.3", 4)
    proof.check_run(run_record(persistent, "encrypted", connections=5, tls_handshakes=5))
    with pytest.raises(ProofError, match="expected at least 4"):
        proof.check_run(run_record(persistent, "plain", connections=3, tls_handshakes=0))


def test_a_record_reads_back_as_it_was_written() -> None:
    record = run_record(CONNECT, "encrypted")
    data = json.loads(json.dumps(record.to_json()))
    assert data["schema"] == 2 and data["server_cpu_ms_per_event"] == pytest.approx(1.0)
    assert data["cell"]["kind"] == "postgresql" and data["connections"] == 401
    assert TransitRecord.from_json(data) == record
    with pytest.raises(ValueError, match="impossible run"):
        run_record(CONNECT, "plain", events=0)


# -- report -----------------------------------------------------------------------------------
TINY = load(
    'tests = ["connect_select1", "select_only", "copy"]\nkey_types = ["rsa2048"]\n'
    'tls_versions = ["TLSv1.3"]\nsslmodes = ["require"]\nquery_clients = [2]\n'
)


def fake_runs(cost: float = 0.3, rounds: int = 12, seed: int = 7) -> list[TransitRecord]:
    rng = random.Random(seed)
    runs = []
    for cell in transit_cells.postgresql_cells(TINY):
        base = {"copy": 3.0, "select_only": 20_000.0}.get(cell.test, 400.0)
        for r in range(rounds):
            for variant in ("plain", "encrypted"):
                factor = (
                    (1 - cost if cell.test == "connect_select1" else 0.97)
                    if variant == "encrypted"
                    else 1
                )
                runs.append(run_record(cell, variant, r, base * factor * rng.uniform(0.99, 1.01)))
    return runs


def pg_part() -> pg_summary.InTransitSummary:
    """A part of the study built from made-up records, as the report builds it."""
    record = {"postgresql": {"proofs": {}, "pki": {"rsa2048": {
                  "server_key": "Public-Key: (2048 bit)", "chain": "private CA"}},
              "postgresql_version": "15.14",
              "bulk_table": {"rows": 252_000, "bytes": 67_108_864}}}  # fmt: skip
    return pg_summary.build(fake_runs(), TINY, record)


def test_the_report_has_a_table_per_test_with_the_cost_of_tls_and_its_proof() -> None:
    part = pg_part()
    connect, query, copy = part.cells
    assert connect.comparisons["rate"].overhead_pct == pytest.approx(30, abs=3)
    assert query.comparisons["rate"].kind == "cost"
    assert connect.variants is not None and connect.variants.encrypted.tls_handshakes > 0
    assert connect.variants.encrypted.connections == connect.variants.encrypted.tls_handshakes
    text = markdown.render(Document("t", section.sections(part)))
    assert "In transit: what TLS costs connections, queries and bulk transfers" in text
    assert "PostgreSQL in-transit setup and proof" in text
    assert "MariaDB" not in text  # its cells were not asked for
    assert "New connections: connect, SELECT 1, disconnect (pgbench -C)" in text
    assert "Queries on persistent connections: select-only (pgbench -S)" in text
    assert "require, rsa2048, TLSv1.3" in text and "PostgreSQL 15.14" in text
    # The copy's rows say what a copy streams, so that copies/s read as MiB/s.
    assert copy.comparisons["rate"].kind == "cost"
    assert "| plain copies/s (95% CI) |" in text and "copies/s × 64.0 is MiB/s" in text
    compared = pg_report.PART.compared(part)
    assert [c.key for c in compared] == [
        ("in-transit", test, "tls", "rsa2048", "", 0.0, clients, False, "postgresql",
         "require", "TLSv1.3")
        for test, clients in (("connect_select1", 1), ("select_only", 2), ("copy", 1))
    ]  # fmt: skip


def test_a_run_of_the_study_gets_its_report_from_the_results_directory(tmp_path: Path) -> None:
    text = (
        'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'
        "[pg_transit]\nquery_clients = [2]\n"
    )
    prof = profiles.parse(text, "t")
    store = ResultStore.create(tmp_path / "out", "t", text)
    cells = transit_cells.postgresql_cells(prof)
    for r in range(2):
        for cell in cells:
            for variant in ("plain", "encrypted"):
                store.append(run_record(cell, variant, r))
    summary = rendering.build_summary(store, prof)
    part = summary.part("in-transit")
    assert {c.kind for c in part.cells} == {"postgresql"}  # MariaDB's: not asked for
    assert [c.rounds for c in part.cells] == [2] * len(cells)
    again = rendering.read_summary(json.loads(json.dumps(summary.to_json())), "t")
    assert again.part("in-transit") == part


# -- the sandbox's pieces ---------------------------------------------------------------------
def test_the_password_file_is_private_and_refuses_what_it_cannot_carry(tmp_path: Path) -> None:
    path = pg_sandbox.passfile(tmp_path, "bench", "role", "abc-DEF_123")
    assert path.read_text() == "*:*:*:role:abc-DEF_123\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ValueError):
        pg_sandbox.passfile(tmp_path, "bad", "role", "a:b")


# RFC 7677's example exchange (user "user", password "pencil"): its salt, nonce, the
# client's proof and the server's signature, which the verifier's keys must reproduce.
RFC7677_SALT = "W22ZaJ0SNY7soEsUEjb6gQ=="
RFC7677_NONCE = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC7677_AUTH = (
    f"n=user,r=rOprNGfwEbeRWgbNEkqO,r={RFC7677_NONCE},s={RFC7677_SALT},i=4096,"
    f"c=biws,r={RFC7677_NONCE}"
).encode()
RFC7677_PROOF = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
RFC7677_SIGNATURE = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_the_scram_verifier_has_postgresqls_form_and_the_rfcs_keys() -> None:
    verifier = pg_sandbox.scram_verifier("pencil", salt=base64.b64decode(RFC7677_SALT))
    method, iterations_salt, keys = verifier.split("$")
    assert method == "SCRAM-SHA-256" and iterations_salt == f"4096:{RFC7677_SALT}"
    stored_key, server_key = (base64.b64decode(k) for k in keys.split(":"))
    # The server key signs the exchange as the RFC's server did...
    signature = hmac.new(server_key, RFC7677_AUTH, "sha256").digest()
    assert base64.b64encode(signature).decode() == RFC7677_SIGNATURE
    # ...and the client's proof, unmasked with the stored key, hashes to the stored key.
    masked = hmac.new(stored_key, RFC7677_AUTH, "sha256").digest()
    client_key = bytes(a ^ b for a, b in zip(base64.b64decode(RFC7677_PROOF), masked, strict=True))
    assert hashlib.sha256(client_key).digest() == stored_key
    assert pg_sandbox.scram_verifier("pencil") != verifier  # a fresh salt each time


def test_a_clients_libpq_settings_blank_the_users_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "theirs")
    monkeypatch.setenv("PGSSLMODE", "disable")
    env = pg_sandbox.clean_env({"PGSSLMODE": "require"})
    assert env["PGPASSWORD"] == "" and env["PGSSLMODE"] == "require"


def test_a_directory_the_servers_user_cannot_enter_is_named(open_dir: Path) -> None:
    other = pg_sandbox.ServerUser("pg", os.getuid() + 4242, 4242, (4242,), ("setpriv",))
    closed, opened = open_dir / "closed", open_dir / "opened"
    closed.mkdir(mode=0o700)
    opened.mkdir(mode=0o711)
    if pg_sandbox.blocked_at(open_dir, other) is not None:
        pytest.skip("the temporary directory's parents are closed to other users")
    assert pg_sandbox.blocked_at(closed / "out", other) == closed
    assert pg_sandbox.blocked_at(opened / "out" / "deeper", other) is None
    me = dataclasses.replace(other, uid=os.getuid(), launcher=())
    assert pg_sandbox.blocked_at(closed / "out", me) is None
    pg_sandbox.make_enterable(closed, other)
    assert pg_sandbox.blocked_at(closed / "out", other) is None
