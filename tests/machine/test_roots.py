"""Private roots without building one: where a root lives, that only a finished build (its
stamp) counts, the command that runs a root's program through its own loader, and the one
line a build without root or mmdebstrap gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.machine import roots
from encbench.servers.mariadb import installs


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    return tmp_path


def test_a_root_lives_in_encbenchs_data_directory_and_counts_only_once_stamped(
    data_home: Path,
) -> None:
    path = roots.where("mysql")
    assert path == data_home / "encbench" / "roots" / "mysql"
    path.mkdir(parents=True)
    assert roots.find("mysql") is None  # a build that never finished
    (path / roots.STAMP).write_text(json.dumps({"version": "9.7.4-2"}))
    found = roots.find("mysql")
    assert found is not None and found.version == "9.7.4-2"
    argv = found.argv("usr/sbin/mysqld")
    assert argv[0] == str(path / "lib64/ld-linux-x86-64.so.2")
    assert argv[1] == "--library-path" and str(path / "usr/lib/x86_64-linux-gnu") in argv[2]
    assert argv[-1] == str(path / "usr/sbin/mysqld")


def test_an_unknown_root_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(BadInput, match=r"give one of mysql, mariadb-11\.8"):
        roots.spec("mysql-8.0")


def test_a_build_without_root_says_how_to_run_it(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roots.os, "geteuid", lambda: 1000)
    with pytest.raises(BadInput, match=r"sudo scripts/setup.sh mysql"):
        roots.build("mysql")
    assert not roots.where("mysql").exists()


def test_the_module_lists_its_roots_and_refuses_other_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert roots.main(["names"]) == 0
    assert capsys.readouterr().out.split() == ["mysql", "mariadb-11.8"]
    assert roots.main(["build"]) == 2
    assert roots.main(["build", "nope"]) == 2
    assert "no private root is named 'nope'" in capsys.readouterr().err


def test_a_profile_names_a_known_install_and_its_studies_need_the_root_built(
    data_home: Path,
) -> None:
    from encbench import studies
    from encbench.profiles import profile as profiles

    with pytest.raises(BadInput, match=r"install.*mariadb-11\.8"):
        profiles.parse('name = "x"\n[server]\ninstall = "mariadb-12"\n', "x.toml")
    profile = profiles.parse('name = "x"\n[server]\ninstall = "mariadb-11.8"\n', "x.toml")
    [at_rest] = studies.named(profile)
    [check] = [c for c in at_rest.machine_needs(profile) if "root" in c.name]
    assert check.name == "MariaDB 11.8 root" and not check.ok
    assert check.fix == "sudo scripts/setup.sh mariadb-11.8 (once)"
    host = profiles.parse('name = "x"\n', "x.toml")
    assert not [c for c in at_rest.machine_needs(host) if "root" in c.name]


def test_install_on_the_command_line_lands_in_server_install_or_is_refused_in_one_line() -> None:
    from tests.helpers import encbench_here

    planned = encbench_here("plan", "smoke", "--install", "mariadb-11.8")
    assert planned.returncode == 0, planned.stderr
    assert 'set: server.install = "mariadb-11.8" (--install; the profile had "system")' in (
        planned.stdout + planned.stderr
    )
    refused = encbench_here("plan", "operations", "--install", "mariadb-11.8")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "operations not (this host's MariaDB)" in line
    unknown = encbench_here("plan", "smoke", "--install", "mariadb-12")
    assert unknown.returncode == 2
    assert "choose from system, mysql, mariadb-11.8" in unknown.stderr


def test_the_family_of_a_recorded_server_is_a_targets_a_sandboxs_or_mariadb() -> None:
    assert installs.recorded_family(None) == installs.MARIADB
    assert installs.recorded_family({"target": {"family": "Percona Server"}}) == "Percona Server"
    assert installs.recorded_family({"family": "MySQL"}) == "MySQL"
    assert installs.recorded_family({"install": {"name": "mysql"}}) == "MySQL"
    assert installs.recorded_family({"install": {"name": "mariadb-11.8"}}) == installs.MARIADB
    assert installs.title(installs.MARIADB) is None and installs.title("MySQL") == "MySQL"
