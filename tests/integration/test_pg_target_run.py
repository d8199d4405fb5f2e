"""PostgreSQL in transit against a server encbench did not start: a PostgreSQL started by
hand (TLS on with a generated certificate, a login with a password and CREATEDB, nothing
else) is the target of the tiny profile.  The run proves and pairs its cells, skips what a
target cannot vary with the reason, and leaves the server with exactly the databases and
roles it had; the password is in no process's command line during the run and in no file
of the results directory."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from encbench.servers import pki, postgresql
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from tests.helpers import encbench, encbench_here, files_holding, skip_unless_ci

LOGIN = "bench"


@pytest.fixture(autouse=True)
def postgresql_installed() -> None:
    if postgresql.bindir() is None:
        skip_unless_ci("PostgreSQL is not installed: run scripts/setup-test-extras.sh")


class UsersPostgres:
    """The user's own server, as the test starts it: TLS on, a password login."""

    def __init__(self, root: Path) -> None:
        self.password = secrets.token_hex(16)
        self.server = PgSandbox("users-postgres", root / "server")
        self.pki = pki.generate(root / "pki", "ecdsa-p256")

    def start(self) -> None:
        server = self.server
        server.initialize(f"host all {LOGIN} 127.0.0.1/32 scram-sha-256")
        cert, key = server.install_tls(self.pki)
        settings = {**pg_sandbox.server_settings(32), "ssl": "on"}
        settings |= {"ssl_cert_file": str(cert), "ssl_key_file": str(key)}
        server.start(settings)
        server.create_role(LOGIN, self.password)
        server.execute(f"ALTER ROLE {LOGIN} CREATEDB")

    def databases(self) -> list[list[str]]:
        return self.server.query("SELECT datname, datdba::regrole FROM pg_database ORDER BY 1")

    def roles(self) -> list[list[str]]:
        return self.server.query(
            "SELECT rolname, rolsuper, rolcreatedb, rolcanlogin FROM pg_roles ORDER BY 1"
        )

    def dsn(self, parameters: str = "") -> str:
        return f"postgresql://{LOGIN}@127.0.0.1:{self.server.port}/{parameters}"


@pytest.fixture
def users_postgres(open_dir: Path, state_dir: Path) -> Iterator[UsersPostgres]:
    made = UsersPostgres(open_dir)
    try:
        made.start()
        yield made
    finally:
        made.server.destroy()


class ArgvWatch:
    """Every command line seen on the machine while it runs, sampled, that holds `secret`."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.seen: set[str] = set()
        self.samples = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stop.is_set():
            for process in psutil.process_iter(["cmdline"]):
                cmdline = " ".join(process.info["cmdline"] or [])
                if self.secret in cmdline:
                    self.seen.add(cmdline)
            self.samples += 1
            self.stop.wait(0.02)

    def __enter__(self) -> ArgvWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_plan_reads_the_target_and_a_run_leaves_its_databases_and_roles_as_they_were(
    users_postgres: UsersPostgres, open_dir: Path
) -> None:
    target = users_postgres
    before = (target.databases(), target.roles())
    env = {"PGPASSWORD": target.password}
    dsn = target.dsn(f"?sslrootcert={target.pki.ca_cert}")

    planned = encbench_here("plan", "postgresql-tiny", "--target", dsn, env=env)
    assert planned.returncode == 0, planned.stderr
    assert "ready: every prerequisite holds" in planned.stdout
    assert "CREATE DATABASE" in planned.stdout and "DROP DATABASE" in planned.stdout
    # The other key types' rows are named as skipped; the profile has one key type.
    assert "cell connect_select1 verify-full target TLSv1.3 1 cl: measured" in planned.stdout
    assert (target.databases(), target.roles()) == before

    out = open_dir / "out"
    argv = [sys.executable, "-m", "encbench", "run", "postgresql-tiny", "--target", dsn]
    with ArgvWatch(target.password) as watch:
        child = subprocess.run(
            [*argv, "--out", str(out)],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            timeout=600,
        )
    assert child.returncode == 0, child.stderr
    assert watch.samples > 10
    assert watch.seen == set(), "the password was on a command line"
    assert files_holding(out, target.password) == []
    assert target.password not in child.stdout + child.stderr

    assert (target.databases(), target.roles()) == before

    runs = [json.loads(line) for line in (out / "in-transit.jsonl").read_text().splitlines()]
    assert runs and {r["variant"] for r in runs} == {"plain", "encrypted"}
    for r in runs:
        assert r["cell"]["key_type"] == "target"
        assert r["connections"] >= (r["events"] if r["cell"]["test"] != "select_only" else 1)
        assert r["tls_handshakes"] == (r["connections"] if r["variant"] == "encrypted" else 0)
        assert r["server_cpu_s"] is None  # not this host's
    record = json.loads((out / "in-transit.json").read_text())["postgresql"]
    assert record["target"]["tls_versions"] == ["TLSv1.2", "TLSv1.3"]
    assert "id-ecPublicKey" in record["pki"]["target"]["server_key"]
    proofs = record["proofs"]
    assert proofs and all(p["plain"] == "plain" for p in proofs.values())
    report = (out / "report.md").read_text()
    assert "| not measured |" in report and "pg_stat_database.sessions" in report
    # The tiny profile's distance rows cannot reach a target: skipped with the reason, for
    # good (no --resume can measure them), so the run is complete and its private folder gone.
    far = {slug: why for slug, why in record["skipped"].items() if "rtt" in slug}
    assert far and all("network namespace" in why for why in far.values())
    assert not (out / "private").exists()


def test_a_login_without_createdb_is_refused_with_the_statement_that_fixes_it(
    users_postgres: UsersPostgres, open_dir: Path
) -> None:
    target = users_postgres
    target.server.execute(f"ALTER ROLE {LOGIN} NOCREATEDB")
    before = target.databases()
    out = open_dir / "out"
    result = encbench(
        "run", "postgresql-tiny", "--target", target.dsn(), "--out", str(out),
        env={"PGPASSWORD": target.password}, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert f'ALTER ROLE "{LOGIN}" CREATEDB;' in line and "encbench plan" in line
    assert not out.exists()
    assert target.databases() == before

    planned = encbench_here(
        "plan", "postgresql-tiny", "--target", target.dsn(),
        env={"PGPASSWORD": target.password},
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    fixes = [line for line in planned.stdout.splitlines() if line.strip().startswith("fix:")]
    assert any(f'ALTER ROLE "{LOGIN}" CREATEDB;' in line for line in fixes), planned.stdout


def test_a_wrong_password_is_refused_in_one_line(users_postgres: UsersPostgres) -> None:
    result = encbench(
        "run", "postgresql-tiny", "--target", users_postgres.dsn(),
        env={"PGPASSWORD": "not-" + users_postgres.password}, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "password authentication failed" in line and "PGPASSWORD" in line
