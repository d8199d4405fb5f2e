"""A target's DSN, password sources and prerequisites, against recorded server answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.servers.dsn import parse_dsn, with_target
from encbench.servers.grants import DATABASE_ORDER, TargetNeeds
from encbench.servers.mariadb import prerequisites as pre
from encbench.servers.mariadb.user_server import password_from

MARIADB = {
    "version": "10.11.6-MariaDB-0+deb12u1",
    "version_comment": "Debian 12",
    "read_only": "OFF",
    "innodb_read_only": "OFF",
    "innodb_file_per_table": "ON",
    "innodb_encrypt_tables": "OFF",
}


def test_a_dsn_gives_host_port_and_user() -> None:
    assert parse_dsn("mysql://bench@db.example:3307/") == {
        "user": "bench", "host": "db.example", "port": 3307,
    }  # fmt: skip
    assert parse_dsn("mysql://u@localhost/?socket=/run/m.sock")["socket"] == "/run/m.sock"


@pytest.mark.parametrize(
    ("dsn", "words"),
    [
        ("mysql://u:secret@h/", "MYSQL_PWD"),
        ("oracle://u@h/", "not a mysql:// or postgresql:// DSN"),
        ("mysql://h:3306/", "no user"),
        ("mysql://u@h/somedb", "no database"),
        ("mysql://u@h/?colour=red", "unknown or repeated parameter"),
    ],
)
def test_a_bad_dsn_is_one_line_with_the_fix(dsn: str, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        parse_dsn(dsn)


def test_the_target_goes_into_the_profile_text_without_a_password() -> None:
    text = with_target('name = "x"\n', False, "mysql://u@h:1/", None, True)
    assert '[target]\nuser = "u"\nhost = "h"\nport = 1\nkeep = true' in text


def test_the_password_comes_from_mysql_pwd_first_then_the_option_file(tmp_path: Path) -> None:
    cnf = tmp_path / "my.cnf"
    cnf.write_text('!includedir /etc/x\n[client]\nuser = u\npassword = "from-file"\n')
    assert password_from(str(cnf), {"MYSQL_PWD": "from-env"}) == "from-env"
    assert password_from(str(cnf), {}) == "from-file"
    assert password_from("", {}) is None
    (tmp_path / "empty.cnf").write_text("[mysqld]\n")
    with pytest.raises(BadInput, match="no password"):
        password_from(str(tmp_path / "empty.cnf"), {})


def test_an_option_files_quotes_are_one_pair_and_the_last_group_read_wins(tmp_path: Path) -> None:
    cnf = tmp_path / "my.cnf"
    cnf.write_text('[client]\npassword = ends-with"\n')
    assert password_from(str(cnf), {}) == 'ends-with"'  # not a pair: the quote is the password's
    cnf.write_text("[client]\npassword = 'a'\n[client-mariadb]\npassword = \"b\"\n")
    assert password_from(str(cnf), {}) == "b"  # libmariadb reads [client-mariadb] last


def test_a_ready_mariadb_server_has_no_problems() -> None:
    assert pre.server_problems(MARIADB, ["file_key_management"]) == []


@pytest.mark.parametrize(
    ("change", "plugins", "words"),
    [
        ({"read_only": "ON"}, ["file_key_management"], "read-only"),
        ({}, [], "no key management plugin"),
        ({"innodb_file_per_table": "OFF"}, ["file_key_management"], "innodb_file_per_table"),
        ({"innodb_encrypt_tables": "FORCE"}, ["file_key_management"], "FORCE"),
        # MySQL 8 and Percona Server 8 are measured (dialects.py); each needs a keyring.
        (
            {"version": "8.0.36", "version_comment": "MySQL Community Server - GPL"},
            [],
            "no keyring is active on the target (MySQL",
        ),
        (
            {"version": "8.0.36-28", "version_comment": "Percona Server (GPL)"},
            [],
            "no keyring is active on the target (Percona Server",
        ),
    ],
)
def test_each_missing_prerequisite_is_named_with_its_fix(
    change: dict[str, str], plugins: list[str], words: str
) -> None:
    problems = pre.server_problems({**MARIADB, **change}, plugins)
    assert problems and words in problems[0]


# Everything any study may ask for (each study's own is in test_target_readiness.py).
EVERYTHING = TargetNeeds(frozenset(DATABASE_ORDER), frozenset({"PROCESS"}), key_plugin=True)
GRANTS = [
    "GRANT PROCESS ON *.* TO `bench`@`%` IDENTIFIED BY PASSWORD '*X'",
    "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER ON `encbench\\_%`.* "
    "TO `bench`@`%`",
]


def test_grants_on_encbenchs_pattern_are_enough() -> None:
    assert pre.privilege_problems(GRANTS, ["encbench_abc_plain"], "bench@%", EVERYTHING) == []


def test_grants_elsewhere_are_not_and_the_fix_is_the_grant() -> None:
    other = ["GRANT ALL PRIVILEGES ON `shop`.* TO `bench`@`%`"]
    problems = pre.privilege_problems(other, ["encbench_abc_plain"], "bench@%", EVERYTHING)
    assert "'bench'@'%' lacks SELECT" in problems[0]
    assert "GRANT PROCESS ON *.* TO 'bench'@'%'" in problems[1]


def test_all_privileges_on_everything_is_enough() -> None:
    shown = ["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost`"]
    assert pre.privilege_problems(shown, ["encbench_x_plain"], "root@localhost", EVERYTHING) == []


def test_a_dsn_carries_the_tls_files_and_the_ssh_host_of_the_servers_cpu() -> None:
    fields = parse_dsn(
        "mysql://b@h:3306/?ssl-ca=/ca&ssl-cert=/c&ssl-key=/k&ssh=root%40h&ssh-config=/cfg"
    )
    assert fields["ssl_ca"] == "/ca" and fields["ssl_cert"] == "/c" and fields["ssl_key"] == "/k"
    assert fields["ssh"] == "root@h" and fields["ssh_config"] == "/cfg"


def test_an_ssh_destination_that_ssh_would_read_as_an_option_is_refused() -> None:
    from encbench.profiles import profile as profiles

    text = 'name = "t"\n[target]\nhost = "h"\nuser = "u"\nssh = "-oProxyCommand=x"\n'
    with pytest.raises(BadInput, match="not an ssh destination"):
        profiles.parse(text, "test")
