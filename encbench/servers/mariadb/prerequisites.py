"""What a user's server must offer before encbench creates anything on it, checked from
the server's own answers (pure functions over them, so that each rule is tested against
recorded answers), each problem one line with its fix.

MariaDB needs a key management plugin; MySQL 8 and Percona Server 8 a keyring component or
plugin, and TABLE_ENCRYPTION_ADMIN where table_encryption_privilege_check is ON (the at-rest
study's dialects.py says how each family encrypts a table; the MySQL family's paths are
written from its documentation and tested against recorded answers only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from encbench.errors import BadInput
from encbench.servers.grants import (
    DATABASE_ORDER,
    GLOBAL_ORDER,
    Missing,
    TargetNeeds,
    account,
    grant_statements,
    missing,
    reasons,
)
from encbench.servers.target import PLAN_HINT

VARIABLES = (
    "version",
    "version_comment",
    "read_only",
    "innodb_read_only",
    "innodb_file_per_table",
    "innodb_encrypt_tables",
    "innodb_buffer_pool_size",
    "have_ssl",  # the in-transit study's TLS rows need it (YES); MySQL 8.4+ has none:
    "ssl_cert",  # there TLS is on when the server has a certificate (tls_offered)
    "tls_version",
    # MySQL 8 / Percona Server 8 (dialects.py): absent on MariaDB.
    "default_table_encryption",
    "table_encryption_privilege_check",
)
# What encbench may need of ALL PRIVILEGES (which privileges a study needs, and why: its
# TargetNeeds, servers/grants.py).
ALL_PRIVILEGES = (*DATABASE_ORDER, *GLOBAL_ORDER)
_GRANT = re.compile(r"^GRANT (.+?) ON (\S+) TO ", re.S)


def family(variables: Mapping[str, str]) -> str:
    text = f"{variables.get('version', '')} {variables.get('version_comment', '')}"
    if "MariaDB" in text:
        return "MariaDB"
    return "Percona Server" if "Percona" in text else "MySQL"


def product(variables: Mapping[str, str]) -> str:
    """The server as people name it: "MySQL 9.7.4-2", "MariaDB 10.11.6-MariaDB"."""
    return f"{family(variables)} {variables.get('version', '?')}"


def tls_missing(variables: Mapping[str, str]) -> str | None:
    """Why the server offers no TLS ("the server has no TLS (have_ssl = DISABLED)"), or
    None when it does."""
    why = no_tls_because(variables)
    return None if why is None else f"the server has no TLS ({why})"


def no_tls_because(variables: Mapping[str, str]) -> str | None:
    """What says the server offers no TLS, or None when it does.  MariaDB (and MySQL before
    8.4) say it in have_ssl (YES, DISABLED when its certificate failed to load, NO); MySQL
    8.4+ has no have_ssl and offers TLS when it has a certificate (by default one it
    generated) and allows a TLS version.  Each TLS run's proof (Ssl_version) is the final
    word."""
    if "have_ssl" in variables:
        have = variables["have_ssl"]
        return None if have.upper() == "YES" else f"have_ssl = {have or '?'}"
    if not variables.get("ssl_cert"):
        return "no certificate: ssl_cert is empty"
    if not variables.get("tls_version"):
        return "tls_version allows none"
    return None


def _on(value: str | None) -> bool:
    return (value or "").upper() in ("ON", "1", "YES")


READ_ONLY = (
    "the target is read-only (read_only or innodb_read_only is ON): encbench must "
    "create its tables; point --target at a writable primary, not a replica"
)


NO_KEY_PLUGIN = (
    "no key management plugin is active on the target (INFORMATION_SCHEMA.PLUGINS, type "
    "ENCRYPTION), so no table can be encrypted: load one, e.g. file_key_management with a key "
    "file, in its configuration and restart it"
)


def read_only(variables: Mapping[str, str]) -> bool:
    return _on(variables.get("read_only")) or _on(variables.get("innodb_read_only"))


def server_problems(
    variables: Mapping[str, str], key_plugins: Iterable[str], grants: Iterable[str] = ()
) -> list[str]:
    """Why encbench cannot create and measure its table sets on this server ([] when it can)."""
    kind = family(variables)
    if read_only(variables):
        return [READ_ONLY]
    if kind != "MariaDB":
        return mysql_problems(kind, variables, key_plugins, grants)
    problems = []
    if not list(key_plugins):
        problems.append(NO_KEY_PLUGIN)
    if not _on(variables.get("innodb_file_per_table")):
        problems.append(
            "innodb_file_per_table is OFF on the target: a table's encryption is per "
            "tablespace, so each table needs its own; SET GLOBAL innodb_file_per_table = ON"
        )
    if (variables.get("innodb_encrypt_tables") or "").upper() == "FORCE":
        problems.append(
            "innodb_encrypt_tables = FORCE on the target refuses ENCRYPTED=NO, so there can be "
            "no plain table set to compare with; measure a server without FORCE"
        )
    return problems


MYSQL_MIN = (8, 0, 24)  # INNODB_TABLESPACES.ENCRYPTION (8.0.13), keyring_component_status


def _version(text: str) -> tuple[int, ...]:
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in found.groups()) if found else (0, 0, 0)


def mysql_problems(
    kind: str, variables: Mapping[str, str], keyrings: Iterable[str], grants: Iterable[str]
) -> list[str]:
    """MySQL 8 and Percona Server 8 (dialects.py): a keyring, file-per-table tablespaces, and
    the right to give a schema a default encryption other than the server's."""
    version = variables.get("version", "")
    if _version(version) < MYSQL_MIN:
        return [
            f"the target is {kind} {version}: encbench needs {kind} 8.0.24 or later "
            "(INNODB_TABLESPACES.ENCRYPTION, performance_schema.keyring_component_status); "
            "measure a newer server"
        ]
    problems = []
    if not list(keyrings):
        problems.append(
            f"no keyring is active on the target ({kind}: performance_schema."
            "keyring_component_status and INFORMATION_SCHEMA.PLUGINS keyring_*), so no table "
            "can be encrypted: install a keyring component (e.g. component_keyring_file with "
            "its manifest) and restart it"
        )
    if not _on(variables.get("innodb_file_per_table")):
        problems.append(
            "innodb_file_per_table is OFF on the target: a table's encryption is per "
            "tablespace, so each table needs its own; SET GLOBAL innodb_file_per_table = ON"
        )
    # Percona Server before 8.0.31 had innodb_encrypt_tables; FORCE refuses ENCRYPTION='N'.
    if (variables.get("innodb_encrypt_tables") or "").upper() == "FORCE":
        problems.append(
            "innodb_encrypt_tables = FORCE on the target refuses ENCRYPTION='N', so there can "
            "be no plain table set to compare with; measure a server without FORCE"
        )
    on_all = privileges_on([line for line in grants if " ON *.* " in line], "*")
    if _on(variables.get("table_encryption_privilege_check")) and not (
        {"TABLE_ENCRYPTION_ADMIN", "SUPER"} & on_all
    ):
        problems.append(
            "table_encryption_privilege_check is ON on the target, so a schema whose default "
            "encryption differs from default_table_encryption needs TABLE_ENCRYPTION_ADMIN "
            "(one of encbench's two always does): GRANT TABLE_ENCRYPTION_ADMIN ON *.* TO "
            "the user"
        )
    return problems


def _db_pattern(text: str) -> re.Pattern[str]:
    """A grant's database name (`encbench\\_%`, *, `db`) as a regular expression."""
    name = text.strip("`")
    if name == "*":
        return re.compile(r".*", re.S)
    out, i = [], 0
    while i < len(name):
        c = name[i]
        if c == "\\" and i + 1 < len(name):
            out.append(re.escape(name[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S | re.I)


def privileges_on(grants: Iterable[str], database: str) -> set[str]:
    """The privileges SHOW GRANTS gives on `database` (whole-database or global grants;
    table and column grants are not enough to create tables, roles are not followed)."""
    found: set[str] = set()
    for line in grants:
        match = _GRANT.match(line)
        if match is None:
            continue
        privs, where = match[1], match[2]
        db, _, table = where.rpartition(".")
        if table != "*" or not _db_pattern(db).fullmatch(database):
            continue
        for priv in privs.split(","):
            priv = priv.strip().upper()
            if priv.startswith("ALL"):
                found.update(ALL_PRIVILEGES)
            else:
                found.add(priv)
    return found


def privilege_problems(
    grants: list[str], databases: Iterable[str], user: str, needs: TargetNeeds
) -> list[str]:
    """What the login lacks of `needs` on encbench's databases (one problem) and on *.*
    (another), each with the GRANT that fixes it, for the account as the server sees it."""
    lacking = missing_privileges(grants, databases, needs)
    who = account(user)
    problems = []
    if lacking.database:
        only = Missing(lacking.database, [])
        problems.append(
            f"the user {who} lacks {', '.join(lacking.database)} on encbench's databases: "
            + " ".join(grant_statements(who, only))
        )
    if lacking.global_:
        only = Missing([], lacking.global_)
        problems.append(
            f"the user {who} lacks {', '.join(lacking.global_)} ({reasons(only)}): "
            + " ".join(grant_statements(who, only))
        )
    return problems


def missing_privileges(grants: list[str], databases: Iterable[str], needs: TargetNeeds) -> Missing:
    """What SHOW GRANTS does not give of `needs`: on any of `databases` (whole-database or
    global grants), and ON *.*."""
    names = list(databases)
    on_all = privileges_on([line for line in grants if " ON *.* " in line], "*")
    own = set.intersection(*(privileges_on(grants, db) for db in names)) if names else on_all
    return missing(needs, own, on_all)


def refuse(problems: list[str]) -> None:
    """One line: the first problem (each has its own fix), how many more there are, and
    where all of them are printed with their fixes."""
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BadInput(f"{problems[0].rstrip(';')}{more}; {PLAN_HINT}")


class _Queryable(Protocol):
    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class ServerFacts:
    """What the checks read of a server: read-only queries only."""

    variables: dict[str, str]  # VARIABLES, as the server reports them
    key_plugins: list[str]  # active encryption (key management) plugins
    grants: list[str]  # SHOW GRANTS of the current user
    user: str  # CURRENT_USER()

    def server_problems(self) -> list[str]:
        return server_problems(self.variables, self.key_plugins, self.grants)

    def privilege_problems(self, databases: Iterable[str], needs: TargetNeeds) -> list[str]:
        return privilege_problems(self.grants, databases, self.user, needs)


def key_plugins(server: _Queryable, variables: Mapping[str, str]) -> list[str]:
    """MariaDB's active key management plugins; for MySQL 8 and Percona Server the active
    keyring component (performance_schema.keyring_component_status) and keyring plugins."""
    kind = family(variables)
    if kind != "MariaDB" and _version(variables.get("version", "")) < MYSQL_MIN:
        return []  # no keyring_component_status to ask; mysql_problems names the version
    if kind == "MariaDB":
        rows = server.query(
            "SELECT PLUGIN_NAME FROM information_schema.PLUGINS "
            "WHERE PLUGIN_TYPE = 'ENCRYPTION' AND PLUGIN_STATUS = 'ACTIVE'"
        )
        return [str(r[0]) for r in rows]
    status = dict(
        (str(k), str(v))
        for k, v in server.query(
            "SELECT STATUS_KEY, STATUS_VALUE FROM performance_schema.keyring_component_status"
        )
    )
    found = []
    if status.get("Component_status", "").lower() == "active":
        found.append(status.get("Component_name", "keyring component"))
    rows = server.query(
        "SELECT PLUGIN_NAME FROM information_schema.PLUGINS "
        "WHERE PLUGIN_NAME LIKE 'keyring%' AND PLUGIN_STATUS = 'ACTIVE'"
    )
    return found + [str(r[0]) for r in rows]


def read_facts(server: _Queryable) -> ServerFacts:
    rows = server.query(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ", ".join(["%s"] * len(VARIABLES)) + ")",
        VARIABLES,
    )
    variables = {str(k): str(v) for k, v in rows}
    return ServerFacts(
        variables=variables,
        key_plugins=key_plugins(server, variables),
        grants=[str(r[0]) for r in server.query("SHOW GRANTS")],
        user=str(server.query("SELECT CURRENT_USER()")[0][0]),
    )
