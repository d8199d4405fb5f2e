"""The tools a run requires come from its profile's studies: a PostgreSQL-only profile needs
none of MariaDB's (mariadbd, its installer, sysbench, the key plugin); a MariaDB profile
still needs them all, and `doctor` and `run` say so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from encbench import proc, studies
from encbench.commands import preflight
from encbench.errors import BadInput
from encbench.profiles import profile as profiles

MARIADB_TOOLS = {"mariadbd", "mariadb-install-db", "sysbench", "file_key_management plugin"}


def required(name: str) -> set[str]:
    prof, _ = profiles.load(name)
    return {c.name for c in preflight.tool_checks() + studies.needs(prof)}


def test_a_postgresql_only_profile_requires_none_of_mariadbs_tools() -> None:
    for name in ("postgresql", "postgresql-tiny"):
        found = required(name)
        assert not found & MARIADB_TOOLS, f"{name} requires {found & MARIADB_TOOLS}"
        assert "openssl" in found


@pytest.mark.parametrize("name", ["quick", "smoke", "in-transit"])
def test_a_mariadb_profile_still_requires_mariadbs_tools(name: str) -> None:
    assert required(name) >= MARIADB_TOOLS


def test_a_postgresql_run_passes_the_tool_checks_without_mariadbd_or_sysbench(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name in MARIADB_TOOLS else real(name))
    mariadb, _ = profiles.load("smoke")
    with pytest.raises(BadInput, match="not found: apt-get install mariadb-server"):
        preflight.require_tools(mariadb)
    postgresql, _ = profiles.load("postgresql-tiny")
    missing = [c for c in preflight.tool_checks() + studies.needs(postgresql) if not c.ok]
    assert not {c.name for c in missing} & MARIADB_TOOLS


def test_doctor_for_a_postgresql_profile_lists_no_mariadb_tool(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from encbench.cli import main

    out = CliRunner().invoke(main, ["doctor", "postgresql-tiny"]).output
    named = [re.match(r"^\S+\s+(.+?): ", line) for line in out.splitlines()]
    tools = {found[1] for found in named if found}
    assert "openssl" in tools
    assert not tools & MARIADB_TOOLS, out


def test_doctor_lists_the_packages_a_profile_lacks_for_the_setup_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from encbench.cli import main
    from encbench.servers import postgresql

    # A machine without PostgreSQL and without sysbench.
    monkeypatch.setattr(postgresql, "bindir", lambda: None)
    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name == "sysbench" else real(name))
    listed = CliRunner().invoke(main, ["doctor", "--packages", "postgresql-tiny"])
    assert listed.exit_code == 0, listed.output
    assert "postgresql-15" in listed.output.split()
    assert "sysbench" not in listed.output.split()  # a PostgreSQL run never needs it
    mariadb = CliRunner().invoke(main, ["doctor", "--packages", "smoke"]).output.split()
    assert "sysbench" in mariadb and "postgresql-15" not in mariadb


def test_doctor_of_mariadb_and_postgresql_lists_postgresqls_checks_as_the_run_makes_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At rest over both kinds, a machine without PostgreSQL measures MariaDB's cells and
    leaves PostgreSQL's out: doctor names those checks as optional, the ones the run makes."""
    from click.testing import CliRunner

    from encbench.cli import main
    from encbench.servers import postgresql
    from encbench.studies.at_rest import postgresql_needs as pg_needs

    monkeypatch.setattr(postgresql, "bindir", lambda: None)
    prof, _ = profiles.load("at-rest-servers")
    result = CliRunner().invoke(main, ["doctor", "at-rest-servers"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    heading = lines.index("at-rest, its PostgreSQL cells (optional):")
    listed = {m[1] for line in lines[heading + 1 :] if (m := re.match(r"^\S+\s+(.+?): ", line))}
    run_checks = {c.name for c in pg_needs.needs(prof)}
    assert run_checks - {"sysbench"} <= listed  # sysbench: listed above, for MariaDB's
    missing = next(line for line in lines[heading:] if "PostgreSQL (" in line)
    assert missing.startswith("optional ") and "not found" in missing, missing
    why = pg_needs.unavailable(prof)
    assert why is not None and "PostgreSQL (" in why  # the run leaves them out for it
    packages = CliRunner().invoke(main, ["doctor", "--packages", "at-rest-servers"])
    assert "postgresql-15" in packages.output.split()
