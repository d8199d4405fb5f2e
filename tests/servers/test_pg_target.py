"""A PostgreSQL target without a server: its DSN, its [target] section, a target of the other
kind refused, the password's sources and the run's password file, the checks' statements,
the cells a target skips with the reason.  With a real server:
tests/integration/test_pg_target_run.py."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from encbench import studies
from encbench.commands import plan
from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from encbench.profiles.profile import TargetSpec
from encbench.servers import dsn
from encbench.servers.postgresql import password as pg_password
from encbench.servers.postgresql import readiness as pg_readiness
from encbench.servers.postgresql import target as pg_target
from encbench.servers.postgresql.readiness import PgFacts
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.in_transit.postgresql_target import skip_reason
from tests.helpers import encbench_here
from tests.studies.in_transit.pg_records import pg_cell

PG_DSN = "postgresql://bench@db.example:5433/"


def spec(**fields: object) -> TargetSpec:
    return TargetSpec.model_validate(
        {"kind": "postgresql", "host": "db", "user": "bench", **fields}
    )


def with_target(name: str, target: str) -> profiles.Profile:
    _, text = profiles.load(name)
    return profiles.parse(dsn.with_target(text, False, target, None, False), name)


def test_a_postgresql_dsn_becomes_a_postgresql_target() -> None:
    fields = dsn.parse_dsn(PG_DSN + "?sslrootcert=/ca.pem")
    assert fields == {
        "user": "bench",
        "kind": "postgresql",
        "ssl_ca": "/ca.pem",
        "host": "db.example",
        "port": 5433,
    }
    assert dsn.parse_dsn("postgres://bench@db/")["port"] == 5432
    assert spec().port == 5432 and spec(port=6000).port == 6000
    assert TargetSpec.model_validate({"host": "db", "user": "u"}).port == 3306


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("postgresql://bench:secret@db/", "PGPASSWORD"),
        ("postgresql://bench@db/?ssl-ca=x", "sslrootcert, sslcert, sslkey"),
        ("postgresql://bench@db/mydb", "no database in the DSN"),
        ("postgresql://@db/", "no user"),
        ("sqlite://bench@db/", "mysql:// or postgresql://"),
    ],
)
def test_a_bad_postgresql_dsn_is_refused_naming_the_fix(target: str, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        dsn.parse_dsn(target)


def test_an_option_file_is_refused_for_a_postgresql_target(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="PGPASSWORD"):
        dsn.with_target("", False, PG_DSN, tmp_path / "my.cnf", False)
    for bad, words in (
        ({"defaults_extra_file": "/x"}, "PGPASSWORD"),
        ({"socket": "/s", "host": ""}, "over TCP"),
        ({"ssh": "me@db"}, "ssh"),
    ):
        with pytest.raises(ValueError, match=words):
            spec(**bad)


def test_a_target_of_the_other_kind_is_refused_with_the_fix() -> None:
    with pytest.raises(BadInput, match="measure PostgreSQL: give a postgresql://USER@HOST:5432/"):
        with_target("postgresql", "mysql://bench@db/")
    with pytest.raises(BadInput, match="measure MariaDB: give a mysql://USER@HOST:3306/"):
        with_target("smoke", PG_DSN)


@pytest.mark.parametrize(
    ("profile", "target", "words"),
    [
        ("smoke", PG_DSN, "give a mysql://"),
        ("postgresql", "mysql://bench@db/", "give a postgresql://"),
    ],
)
def test_the_cli_refuses_a_target_of_the_other_kind_in_one_line(
    tmp_path: Path, profile: str, target: str, words: str
) -> None:
    for command in ("plan", "run"):
        result = encbench_here(command, profile, "--target", target, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        [line] = result.stderr.strip().splitlines()
        assert words in line and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_mixed_profile_leaves_the_other_servers_studies_out_with_the_reason() -> None:
    _, text = profiles.load("postgresql")
    prof = profiles.parse(dsn.with_target(text, False, PG_DSN, None, False), "mixed")
    left = studies.left_out(prof, {})
    assert list(left) == ["at-rest"]
    assert "measures mariadb, and the target is postgresql" in left["at-rest"]
    assert [s.name for s in studies.named(prof.without(left))] == ["in-transit"]


def test_the_password_comes_from_pgpassword_else_the_users_password_file(tmp_path: Path) -> None:
    target = spec(host="db", port=5432)
    assert pg_password.password_from(target, {"PGPASSWORD": "p1"}) == "p1"
    passfile = tmp_path / "pgpass"
    passfile.write_text(
        "# comment\n"
        "other:5432:*:bench:wrong\n"
        "db:5433:*:bench:wrong-port\n"
        "db:*:mydb:bench:another-database\n"
        "db:*:postgres:bench:maintenance\n"
    )
    env = {"PGPASSFILE": str(passfile)}
    # Not a line for another database; one for the maintenance database, where the checks run.
    assert pg_password.password_from(target, env) == "maintenance"
    passfile.write_text("*:5432:*:bench:p\\:2\\\\x\n")
    assert pg_password.password_from(target, env) == "p:2\\x"
    assert pg_password.password_from(target, {"PGPASSFILE": str(tmp_path / "none")}) is None
    assert pg_password.password_from(target, {"HOME": str(tmp_path)}) is None


def test_the_runs_password_file_is_private_and_escaped(tmp_path: Path) -> None:
    written = pg_password.write_passfile(tmp_path, spec(), "p:w\\d")
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert written.read_text() == "*:*:*:bench:p\\:w\\\\d\n"
    assert pg_password._pgpass_fields(written.read_text().strip())[4] == "p:w\\d"
    assert pg_password.write_passfile(tmp_path, spec(), None).read_text() == ""
    with pytest.raises(BadInput, match="line break"):
        pg_password.write_passfile(tmp_path, spec(), "a\nb")


def test_a_childs_environment_carries_the_password_file_not_the_password(tmp_path: Path) -> None:
    target = pg_target.PgTarget(spec(), tmp_path / "f.pgpass", tmp_path)
    env = target.env("db1", pg_target.Route("require", "TLSv1.2"))
    assert env["PGPASSFILE"] == str(tmp_path / "f.pgpass") and env.get("PGPASSWORD", "") == ""
    assert env["PGSSLMINPROTOCOLVERSION"] == env["PGSSLMAXPROTOCOLVERSION"] == "TLSv1.2"
    assert env["PGSSLMODE"] == "require" and env["PGDATABASE"] == "db1"
    assert "PGSSLMINPROTOCOLVERSION" not in target.env("db1", pg_target.Route("disable"))


def facts(**changed: object) -> PgFacts:
    fields: dict[str, object] = {
        "user": "bench",
        "superuser": False,
        "createdb": True,
        "version": "15.14",
        "version_num": 150014,
        "ssl": True,
        "ssl_min_protocol": "TLSv1.2",
        "ssl_max_protocol": "",
        "read_only": False,
        "reads_pg_stat_ssl": True,
        "reads_pg_stat_activity": True,
        "reads_pg_stat_database": True,
        "tls_accepted": ("TLSv1.2", "TLSv1.3"),
    }
    return PgFacts(**{**fields, **changed})  # type: ignore[arg-type]


def test_a_ready_server_has_no_problem_and_each_missing_thing_has_its_statement() -> None:
    assert pg_readiness.problems(facts(), spec()) == []
    assert pg_readiness.problems(facts(superuser=True, createdb=False), spec()) == []
    found = pg_readiness.problems(
        facts(createdb=False, ssl=False, reads_pg_stat_ssl=False, plain_refused="no entry"),
        spec(),
    )
    assert len(found) == 4
    assert 'ALTER ROLE "bench" CREATEDB;' in found[0]
    assert "ALTER SYSTEM SET ssl = on; SELECT pg_reload_conf();" in found[1]
    assert 'GRANT SELECT ON pg_catalog.pg_stat_ssl TO "bench";' in found[2]
    assert "host all bench" in found[3]
    assert all("\n" not in line for line in found)
    with pytest.raises(
        BadInput, match=r'ALTER ROLE "bench" CREATEDB \(and 3 more\); `encbench plan`'
    ):
        pg_readiness.refuse(found)
    assert "PostgreSQL 14" in pg_readiness.problems(facts(version_num=130000), spec())[0]


def test_a_target_measures_its_own_certificate_and_skips_what_it_cannot_vary() -> None:
    prof = with_target("postgresql", PG_DSN)
    found = transit_cells.postgresql_cells(prof)
    sandboxed = transit_cells.postgresql_cells(profiles.load("postgresql")[0])
    assert len(found) == len(sandboxed)
    assert {c.key_type for c in found} == {"target", "ecdsa-p256", "rsa4096"}
    assert [c.key_type == "target" for c in found] == [c.key_type == "rsa2048" for c in sandboxed]
    first = pg_cell("connect_select1", "require", "target", "TLSv1.3", 1)
    accepted = ("TLSv1.2", "TLSv1.3")
    assert skip_reason(first, spec(), accepted) is None
    other_key = pg_cell("connect_select1", "require", "rsa4096", "TLSv1.3", 1)
    assert "certificate is the user's own" in (skip_reason(other_key, spec(), accepted) or "")
    verify = pg_cell("connect_select1", "verify-full", "target", "TLSv1.3", 1)
    assert "sslrootcert" in (skip_reason(verify, spec(), accepted) or "")
    assert skip_reason(verify, spec(ssl_ca="/ca.pem"), accepted) is None
    old = pg_cell("select_only", "require", "target", "TLSv1.2", 1)
    assert "accepts TLSv1.3" in (skip_reason(old, spec(), ("TLSv1.3",)) or "")
    far = pg_cell("connect_select1", "require", "target", "TLSv1.3", 1, rtt_ms=10)
    assert "network namespace" in (skip_reason(far, spec(), accepted) or "")


def test_a_target_run_needs_no_server_here() -> None:
    prof = with_target("postgresql", PG_DSN)
    at_rest, pg = studies.named(prof)  # at rest takes no PostgreSQL target: left out
    assert at_rest.name in studies.skipped_for_target(prof)
    assert pg.here.memory_mb(prof)[0] == 0
    needed = {c.name for c in pg.machine_needs(prof)}
    assert needed == {"PostgreSQL's psql", "PostgreSQL's pgbench", "openssl"}
    assert [s.name for s in studies.named(prof) if studies.measures_target(s, prof)] == [
        "in-transit"
    ]
    plans = {p.study.name: p for p in plan.study_plans(prof)}
    assert plans["in-transit"].left_out is None and plans["at-rest"].left_out
