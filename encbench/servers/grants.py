"""What a run needs of a target's login, which of it the login lacks (read from SHOW GRANTS
only), and the statements that give it, for the account as the server sees it
(CURRENT_USER(), or the account named by an "Access denied" when it refuses the login).

Only what encbench sends is asked for (each privilege's use is in WHY): on its own
databases, `encbench\\_%`, what creates, loads, rebuilds, reads, writes and drops them; on
*.*, PROCESS for the proof.  No SET GLOBAL, no SUPER, no RELOAD: encbench changes no global
variable of a server it did not start and never restarts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# The pattern every database encbench creates matches (servers/owned.py names them).
OWN_DATABASES = "`encbench\\_%`.*"
# In the order MariaDB lists them in SHOW GRANTS, so a statement reads as the server's own.
DATABASE_ORDER = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX")
GLOBAL_ORDER = ("PROCESS",)
# What each privilege is for, as `plan` explains it.
WHY = {
    "SELECT": "the read workloads and the proofs' reads",
    "INSERT": "sysbench prepare's rows (ALTER TABLE's rebuild needs it too)",
    "UPDATE": "the write workloads' UPDATEs",
    "DELETE": "the write workloads' DELETEs",
    "CREATE": "CREATE DATABASE and its tables (ALTER TABLE's rebuild needs it too)",
    "DROP": "DROP DATABASE of its own databases at the end",
    "ALTER": "ALTER TABLE … ENCRYPTED=YES / NO",
    "INDEX": "sysbench prepare's CREATE INDEX",
    "PROCESS": "INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION (the proof) shows nothing "
    "without it",
}


@dataclass(frozen=True)
class TargetNeeds:
    """What a study needs of a target: privileges on encbench's own databases and on *.*,
    and whether its tables are encrypted (a key management plugin must be active)."""

    database: frozenset[str] = frozenset()
    global_: frozenset[str] = frozenset()
    key_plugin: bool = False

    def __or__(self, other: TargetNeeds) -> TargetNeeds:
        return TargetNeeds(
            self.database | other.database,
            self.global_ | other.global_,
            self.key_plugin or other.key_plugin,
        )

    def __bool__(self) -> bool:
        return bool(self.database or self.global_ or self.key_plugin)


NOTHING = TargetNeeds()


def ordered(privileges: Iterable[str], order: tuple[str, ...]) -> list[str]:
    have = set(privileges)
    return [p for p in order if p in have] + sorted(have - set(order))


@dataclass(frozen=True)
class Missing:
    """What the login lacks: on encbench's own databases, and on *.*."""

    database: list[str]
    global_: list[str]

    def __bool__(self) -> bool:
        return bool(self.database or self.global_)


def missing(needs: TargetNeeds, on_own: Iterable[str], on_all: Iterable[str]) -> Missing:
    """`on_own`: what SHOW GRANTS gives on one of encbench's database names; `on_all`: what
    it gives ON *.* (global privileges are granted there only)."""
    own, every = set(on_own), set(on_all)
    return Missing(
        database=ordered(needs.database - own, DATABASE_ORDER),
        global_=ordered(needs.global_ - every, GLOBAL_ORDER),
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def account(current_user: str) -> str:
    """CURRENT_USER()'s `user@host` as SQL names the account: 'user'@'host'."""
    user, at, host = current_user.rpartition("@")
    return f"{_quoted(user)}@{_quoted(host)}" if at else _quoted(current_user)


def grant_statements(who: str, lacking: Missing) -> list[str]:
    out = []
    if lacking.database:
        out.append(f"GRANT {', '.join(lacking.database)} ON {OWN_DATABASES} TO {who};")
    if lacking.global_:
        out.append(f"GRANT {', '.join(lacking.global_)} ON *.* TO {who};")
    return out


def create_user_statement(who: str) -> str:
    return f"CREATE USER {who} IDENTIFIED BY '…';"


_DENIED = re.compile(r"Access denied for user '([^']*)'@'([^']*)'( \(using password: \w+\))?")


def denied_account(message: str) -> str | None:
    """The account an "Access denied for user 'u'@'h'" names: the user as given, the host as
    the server saw the client come (what CREATE USER must name); None in other messages."""
    found = _DENIED.search(message)
    return f"{_quoted(found[1])}@{_quoted(found[2])}" if found else None


def denial(message: str) -> str:
    """The server's own words of a refused login, without what encbench wrapped them in."""
    found = _DENIED.search(message)
    return found[0] if found else message


def reasons(lacking: Missing) -> str:
    """Why each missing privilege is needed, in one line."""
    return "; ".join(f"{p}: {WHY.get(p, 'needed')}" for p in lacking.database + lacking.global_)
