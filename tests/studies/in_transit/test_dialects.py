"""MySQL 8 and Percona Server 8 as targets (studies/at_rest/dialects.py), against recorded
server answers: what each would answer to the checks' and the proof's queries, written from
their documentation (the MySQL 8.0/8.4 Reference Manual: keyring_component_status,
INNODB_TABLESPACES, table_encryption_privilege_check; Percona Server 8.0: keyring_vault,
innodb_encrypt_tables before 8.0.31).  No such server reaches this project's machines."""

from __future__ import annotations

from typing import Any

import pytest

from encbench.errors import ProofError
from encbench.profiles import profile as profiles
from encbench.proof import at_rest as proof
from encbench.servers.mariadb import prerequisites as pre
from encbench.studies.at_rest.dialects import MARIADB_DIALECT, dialect_for
from encbench.studies.at_rest.needs import target_needs
from encbench.studies.at_rest.table_sets import statements

MYSQL_VARIABLES = {
    "version": "8.0.36",
    "version_comment": "MySQL Community Server - GPL",
    "read_only": "OFF",
    "innodb_read_only": "OFF",
    "innodb_file_per_table": "ON",
    "innodb_buffer_pool_size": "134217728",
    "have_ssl": "YES",
    "default_table_encryption": "OFF",
    "table_encryption_privilege_check": "OFF",
}
# performance_schema.keyring_component_status with component_keyring_file loaded (the
# Reference Manual's example).
KEYRING_FILE = [
    ("Component_name", "component_keyring_file"),
    ("Author", "Oracle Corporation"),
    ("License", "GPL"),
    ("Implementation_name", "component_keyring_file"),
    ("Version", "1.0"),
    ("Component_status", "Active"),
    ("Data_file", "/usr/local/mysql/keyring/component_keyring_file"),
    ("Read_only", "No"),
]
GRANTS = [
    "GRANT PROCESS ON *.* TO `bench`@`%`",
    "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX ON `encbench\\_%`.* "
    "TO `bench`@`%`",
]


class Recorded:
    """A server that answers each query the checks send from recorded rows."""

    def __init__(self, variables: dict[str, str], **answers: list[tuple[Any, ...]]) -> None:
        self.variables = variables
        self.answers = answers
        self.sent: list[str] = []

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        self.sent.append(sql)
        if sql.startswith("SHOW GLOBAL VARIABLES"):
            return [(k, v) for k, v in self.variables.items() if k in (args or ())]
        if "keyring_component_status" in sql:
            return self.answers.get("component", [])
        if "information_schema.PLUGINS" in sql:
            return self.answers.get("plugins", [])
        if sql == "SHOW GRANTS":
            return self.answers.get("grants") or [(g,) for g in GRANTS]
        if sql == "SELECT CURRENT_USER()":
            return [("bench@%",)]
        raise AssertionError(f"unexpected query {sql}")


def test_a_mysql_8_server_with_a_keyring_component_is_ready() -> None:
    facts = pre.read_facts(Recorded(MYSQL_VARIABLES, component=KEYRING_FILE))
    assert facts.key_plugins == ["component_keyring_file"]
    assert facts.server_problems() == []
    assert (
        facts.privilege_problems(
            ["encbench_x_plain"], target_needs(profiles.parse('name = "t"', "t"))
        )
        == []
    )


def test_a_percona_server_with_the_vault_keyring_plugin_is_ready() -> None:
    percona = {
        **MYSQL_VARIABLES,
        "version": "8.0.35-27",
        "version_comment": "Percona Server (GPL), Release 27, Revision 2f8eeb58",
    }
    server = Recorded(percona, plugins=[("keyring_vault",)])
    facts = pre.read_facts(server)
    assert pre.family(facts.variables) == "Percona Server"
    assert facts.key_plugins == ["keyring_vault"]
    assert facts.server_problems() == []
    # MariaDB's plugin type ENCRYPTION is never asked of it: a keyring is.
    assert not any("PLUGIN_TYPE = 'ENCRYPTION'" in sql for sql in server.sent)


@pytest.mark.parametrize(
    ("change", "component", "words"),
    [
        ({}, [], "no keyring is active"),
        ({"innodb_file_per_table": "OFF"}, KEYRING_FILE, "innodb_file_per_table is OFF"),
        ({"read_only": "ON"}, KEYRING_FILE, "read-only"),
        ({"version": "5.7.44"}, KEYRING_FILE, "needs MySQL 8.0.24 or later"),
        ({"innodb_encrypt_tables": "FORCE"}, KEYRING_FILE, "refuses ENCRYPTION='N'"),
        (
            {"table_encryption_privilege_check": "ON"},
            KEYRING_FILE,
            "GRANT TABLE_ENCRYPTION_ADMIN ON *.*",
        ),
    ],
)
def test_each_missing_mysql_prerequisite_is_named_with_its_fix(
    change: dict[str, str], component: list[tuple[Any, ...]], words: str
) -> None:
    facts = pre.read_facts(Recorded({**MYSQL_VARIABLES, **change}, component=component))
    problems = facts.server_problems()
    assert problems and words in problems[0]


def test_the_privilege_check_is_satisfied_by_table_encryption_admin() -> None:
    variables = {**MYSQL_VARIABLES, "table_encryption_privilege_check": "ON"}
    grants = [*GRANTS, "GRANT TABLE_ENCRYPTION_ADMIN ON *.* TO `bench`@`%`"]
    assert pre.server_problems(variables, ["component_keyring_file"], grants) == []


def test_each_familys_statements_make_a_plain_and_an_encrypted_set() -> None:
    profile = profiles.parse('name = "t"\n[target]\nhost = "h"\nuser = "u"\n', "test")
    mysql = "\n".join(statements(profile, "k", dialect_for("MySQL")))
    assert "CREATE DATABASE `encbench_k_plain` DEFAULT ENCRYPTION='N'" in mysql
    assert "CREATE DATABASE `encbench_k_encrypted` DEFAULT ENCRYPTION='Y'" in mysql
    alters = [line for line in mysql.splitlines() if line.startswith("ALTER TABLE")]
    assert [a.rsplit(" ", 1)[1] for a in alters] == ["ENCRYPTION='N'", "ENCRYPTION='Y'"]
    assert "ENCRYPTED=" not in mysql
    mariadb = "\n".join(statements(profile, "k", MARIADB_DIALECT))
    assert "ENCRYPTED=YES" in mariadb and "DEFAULT ENCRYPTION" not in mariadb
    assert not dialect_for("Percona Server").page_counters and MARIADB_DIALECT.page_counters


class Tablespaces:
    """INFORMATION_SCHEMA.INNODB_TABLESPACES as MySQL reports it: NAME db/table and
    ENCRYPTION 'Y' or 'N', reduced by the dialect's query to (NAME, 1 or 0)."""

    def __init__(self, database: str, encryption: str) -> None:
        self.database = database
        self.encryption = encryption

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        assert "INNODB_TABLESPACES " in sql and args == (f"{self.database}/%",)
        return [(f"{self.database}/sbtest1", 1 if self.encryption == "Y" else 0)]


def test_the_mysql_proof_reads_innodb_tablespaces_and_refuses_a_false_claim() -> None:
    sql = dialect_for("MySQL").proof_sql
    found = proof.prove_tablespaces(
        Tablespaces("encbench_k_encrypted", "Y"), "encrypted", 1,  # type: ignore[arg-type]
        proof_table=False, sql=sql,
    )  # fmt: skip
    assert found["tablespaces_encrypted"] == 1
    with pytest.raises(ProofError, match="not encrypted per the server: sbtest1"):
        proof.prove_tablespaces(
            Tablespaces("encbench_k_encrypted", "N"), "encrypted", 1,  # type: ignore[arg-type]
            proof_table=False, sql=sql,
        )  # fmt: skip


class Logs:
    """A MySQL server's answers about its logs: redo on or off, its undo tablespaces'
    ENCRYPTION, and SHOW BINARY LOGS (the first written before its keyring loaded)."""

    def __init__(self, redo: int, undo: list[str], binlogs: list[str]) -> None:
        self.redo, self.undo, self.binlogs = redo, undo, binlogs

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        if "innodb_redo_log_encrypt" in sql:
            return [(self.redo,)]
        if "SPACE_TYPE = 'Undo'" in sql:
            return [(e,) for e in self.undo]
        assert sql == "SHOW BINARY LOGS"
        return [(f"binlog.00000{i + 1}", 100, e) for i, e in enumerate(self.binlogs)]


def test_mysqls_account_of_its_logs_is_judged_against_each_claim() -> None:
    states = dialect_for("MySQL").logs.states
    assert states is not None and MARIADB_DIALECT.logs.states is None
    encrypted = states(Logs(1, ["Y", "Y"], ["No", "Yes"]))  # type: ignore[arg-type]
    assert encrypted == {"redo": True, "undo": True, "binlog": True}
    assert proof.log_problems(encrypted, "encrypted") == []
    half = states(Logs(1, ["Y", "N"], ["No", "No"]))  # type: ignore[arg-type]
    assert proof.log_problems(half, "encrypted") == [
        "logs not encrypted per the server: undo, binlog"
    ]
    plain = states(Logs(0, ["N", "N"], ["No"]))  # type: ignore[arg-type]
    assert proof.log_problems(plain, "plain") == []
    assert proof.log_problems(encrypted, "plain") == [
        "logs encrypted per the server: redo, undo, binlog"
    ]


def test_mysqls_scope_all_encrypts_its_redo_undo_and_binary_log() -> None:
    from encbench.servers.mariadb.options import mysql_encryption_options
    from encbench.servers.variants import EncryptionSpec

    assert mysql_encryption_options(EncryptionSpec(scope="tables")) == {
        "default_table_encryption": "ON"
    }
    assert mysql_encryption_options(EncryptionSpec(scope="all")) == {
        "default_table_encryption": "ON",
        "innodb_redo_log_encrypt": "ON",
        "innodb_undo_log_encrypt": "ON",
        "binlog_encryption": "ON",
    }
