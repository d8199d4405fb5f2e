"""MariaDB's part of `encbench estimate` (and MySQL's, a release of its kind), the first
kind's (estimate/kinds.py's FirstKind, given by its ways): the status counters the model's
causes are named by, read over one connection (no TLS: the harness's reads are no
handshakes of the server's) — SHOW GLOBAL VARIABLES at both ends and SHOW GLOBAL STATUS
every 10 s — and the series mysqld_exporter makes of them in Prometheus.

The window's own traffic is taken out: each reading also asks its session's Bytes_sent and
Bytes_received (SHOW SESSION STATUS), whose growth is the harness's share of the server's
(a SHOW GLOBAL STATUS answer is tens of KiB: on a quiet server most of its bytes).  The one
connection is opened before the first reading, so Connections counts none of the window's.

Here only what MariaDB knows, in plain values: estimate/ makes the model's rates, windows and
reports of them (servers/ stands below estimate/)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import pymysql

from encbench.errors import BadInput, EncbenchError
from encbench.servers.mariadb import prerequisites
from encbench.servers.mariadb.user_server import UserServer

LOGIN_DENIED = 1045  # ER_ACCESS_DENIED_ERROR: the user or its password

# Counters without which there is nothing to estimate; every MariaDB and MySQL has them.
REQUIRED = (
    "Uptime",
    "Innodb_pages_read",
    "Innodb_pages_written",
    "Connections",
    "Bytes_sent",
    "Bytes_received",
)
# Counted where the server has them: MySQL counts no binary log bytes and no pages through
# the cipher; a server without TLS has no Ssl_* counters.
OPTIONAL = (
    "Innodb_buffer_pool_reads",
    "Innodb_os_log_written",
    "Binlog_bytes_written",
    "Ssl_accepts",
    "Ssl_finished_accepts",
    "Innodb_num_pages_decrypted",
    "Innodb_num_pages_encrypted",
)
# What the estimate reads of the server's settings: what it encrypts already, and its cipher.
# MariaDB's names, then MySQL's for the same things (a server has only its own).
VARIABLES = (
    "version",
    "version_comment",
    "pid_file",
    "innodb_encrypt_tables",
    "innodb_encrypt_log",
    "encrypt_binlog",
    "default_table_encryption",
    "innodb_redo_log_encrypt",
    "binlog_encryption",
    "log_bin",
    "have_ssl",
    "ssl_cert",
    "tls_version",
    "require_secure_transport",
    "file_key_management_encryption_algorithm",
    "innodb_page_size",
)
PID_FILE = "pid_file"  # the setting that names its process's pid file (its CPU over ssh)
CIPHER = "file_key_management_encryption_algorithm"  # its cipher at rest, where named


class Rates(Protocol):
    """What the estimate's rates (estimate/counters.py's Rates) hold that is read here."""

    @property
    def pages_read(self) -> float: ...
    @property
    def pages_written(self) -> float: ...
    @property
    def connections(self) -> float: ...
    @property
    def tls_handshakes(self) -> float | None: ...
    @property
    def pages_decrypted(self) -> float | None: ...
    @property
    def pages_encrypted(self) -> float | None: ...


class Reading(Protocol):
    """One reading of the window (estimate/counters.py's Sample)."""

    at_s: float
    counters: dict[str, int]
    own_bytes: int
    cpu_s: float | None


class StatusSession:
    """The one connection of a window (estimate/counters.py's Session)."""

    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def _rows(self, sql: str) -> dict[str, str]:
        self.cursor.execute(sql)
        return {str(name): str(value) for name, value in self.cursor.fetchall()}

    def status(self) -> dict[str, str]:
        return self._rows("SHOW GLOBAL STATUS")

    def variables(self) -> dict[str, str]:
        everything = self._rows("SHOW GLOBAL VARIABLES")
        return {k: everything[k] for k in VARIABLES if k in everything}

    def own_bytes(self) -> int:
        rows = self._rows("SHOW SESSION STATUS LIKE 'Bytes\\_%'")
        return int(rows.get("Bytes_sent", 0)) + int(rows.get("Bytes_received", 0))

    def grants(self) -> list[str]:
        """Only where a counter is missing: whether PROCESS would show it."""
        self.cursor.execute("SHOW GRANTS")
        return [str(row[0]) for row in self.cursor.fetchall()]


def login_refused(server: UserServer, exc: BadInput) -> BadInput:
    """A refused login, with the user the estimate needs: a login and nothing more."""
    cause = exc.__cause__
    code = cause.args[0] if isinstance(cause, pymysql.MySQLError) and cause.args else None
    if code != LOGIN_DENIED:
        return exc
    user = server.where.user
    return BadInput(
        f"{server.name} refused {user}'s login ({cause.args[-1] if cause else exc}): check the "
        "password (MYSQL_PWD or --defaults-extra-file), or create the user — reading status "
        f"and variables needs no privilege: CREATE USER '{user}'@'THIS_HOST' IDENTIFIED BY '…'"
    )


@contextlib.contextmanager
def server_session(server: UserServer) -> Iterator[StatusSession]:
    """One connection for the whole window; a refused login says how to create the user."""
    try:
        with server.cursor(timeout_s=server.status_timeout_s) as cur:
            yield StatusSession(cur)
    except BadInput as exc:
        raise login_refused(server, exc) from exc.__cause__


def session(spec: Any) -> contextlib.AbstractContextManager[StatusSession]:
    """The window's one connection to the target (TargetSpec)."""
    return server_session(UserServer.of_target(spec))


def check_counters(status: dict[str, str], grants: Callable[[], list[str]], user: str) -> None:
    """The counters the estimate needs are there; where they are not and the user lacks
    PROCESS (a server that shows InnoDB's counters only with it), the GRANT that fixes it."""
    missing = [name for name in REQUIRED if name not in status]
    if not missing:
        return
    on_all = prerequisites.privileges_on([g for g in grants() if " ON *.* " in g], "*")
    if "PROCESS" not in on_all:
        raise BadInput(
            f"the server shows no {', '.join(missing)} to this user: GRANT PROCESS ON *.* TO "
            f"'{user}'@'THIS_HOST'"
        )
    raise BadInput(
        f"the server counts no {', '.join(missing)}: the estimate needs MariaDB's or MySQL's "
        "InnoDB status counters"
    )


def counted(status: Mapping[str, str]) -> dict[str, int]:
    """The counters the estimate reads, of a SHOW GLOBAL STATUS answer."""
    found = {}
    for name in (*REQUIRED, *OPTIONAL):
        try:
            found[name] = int(float(status[name]))
        except (KeyError, ValueError):
            continue
    return found


def interval_rates(a: Reading, b: Reading) -> dict[str, float | None]:
    """Each counter's growth per second between two readings, by the estimate's rates'
    fields."""
    seconds = b.at_s - a.at_s
    if seconds <= 0:
        raise EncbenchError("two readings of the server's counters at the same moment")
    if b.counters["Uptime"] < a.counters["Uptime"]:
        raise EncbenchError(
            "the server restarted during the window (its Uptime went back): run the estimate again"
        )

    def per_s(name: str) -> float | None:
        if name not in a.counters or name not in b.counters:
            return None
        return max(b.counters[name] - a.counters[name], 0) / seconds

    def required(name: str) -> float:
        value = per_s(name)
        assert value is not None, f"{name} is required (check_counters)"
        return value

    moved = required("Bytes_sent") + required("Bytes_received")
    own = (b.own_bytes - a.own_bytes) / seconds
    cores = (b.cpu_s - a.cpu_s) / seconds if a.cpu_s is not None and b.cpu_s is not None else None
    return {
        "seconds": seconds,
        "pages_read": required("Innodb_pages_read"),
        "pages_written": required("Innodb_pages_written"),
        "buffer_pool_reads": per_s("Innodb_buffer_pool_reads"),
        "redo_bytes": per_s("Innodb_os_log_written"),
        "binlog_bytes": per_s("Binlog_bytes_written"),
        "connections": required("Connections"),
        "tls_handshakes": per_s("Ssl_finished_accepts"),
        "bytes": max(moved - own, 0.0),
        "pages_decrypted": per_s("Innodb_num_pages_decrypted"),
        "pages_encrypted": per_s("Innodb_num_pages_encrypted"),
        "server_cores": cores,
    }


# mysqld_exporter's series (Prometheus): SHOW GLOBAL STATUS's, each of the estimate's rates'
# fields from these (the counter's name in lower case; the bytes are sent + received).
EXPORTER = "mysqld_exporter"
STATUS = "mysql_global_status_"
SERIES: dict[str, tuple[str, ...]] = {
    "pages_read": ("innodb_pages_read",),
    "pages_written": ("innodb_pages_written",),
    "redo_bytes": ("innodb_os_log_written",),
    "binlog_bytes": ("binlog_bytes_written",),
    "connections": ("connections",),
    "tls_handshakes": ("ssl_finished_accepts",),
    "bytes": ("bytes_sent", "bytes_received"),
    "pages_decrypted": ("innodb_num_pages_decrypted",),
    "pages_encrypted": ("innodb_num_pages_encrypted",),
}
SERIES_REQUIRED = ("pages_read", "pages_written", "connections", "bytes")
UPTIME = "uptime"  # its status counter that goes back at a restart
UP = "mysql_up"  # whether the exporter reached its server
VARIABLE_SERIES = "mysql_global_variables_"
# SHOW GLOBAL VARIABLES as the exporter shows them: numbers only, ON/YES as 1, OFF/NO as 0
# (FORCE and strings such as the key plugin's cipher are not exported).
EXPORTED_VARIABLES = (
    "innodb_encrypt_tables",
    "innodb_encrypt_log",
    "encrypt_binlog",
    "log_bin",
    "have_ssl",
    "require_secure_transport",
)
VERSION = ("mysql_version_info", ("version", "version_comment"))


def exported_variables(values: Mapping[str, float]) -> dict[str, str]:
    """Its settings as SHOW GLOBAL VARIABLES words (name → the exporter's number), for the
    report's `encrypted now`."""
    found = {}
    for name in EXPORTED_VARIABLES:
        value = values.get(name)
        if value is not None:
            on = value >= 1
            found[name] = ("YES" if on else "NO") if name == "have_ssl" else ("ON" if on else "OFF")
    if "have_ssl" not in found:
        # MySQL 8.4+ has no have_ssl, and its certificate's path is no number the exporter
        # shows: let its connections' own counter (Ssl_finished_accepts) say what uses TLS.
        found |= {"ssl_cert": "(not exported)", "tls_version": "(not exported)"}
    return found


def version_of(labels: Mapping[str, str]) -> str:
    return " ".join(x for x in (labels.get("version"), labels.get("version_comment")) if x)


def server_words(v: Mapping[str, str]) -> str:
    """The server as its report names it: its family, version and build's comment."""
    if not v.get("version"):
        return ""
    return " ".join(x for x in (prerequisites.product(v), v.get("version_comment")) if x)


def _on(value: str | None) -> bool:
    return (value or "").upper() in ("ON", "FORCE", "YES", "1")


def on_now(v: Mapping[str, str], intervals: Sequence[Rates]) -> dict[str, str]:
    """What the server already encrypts of each cause, from its settings and its counters
    over the window's intervals."""

    def setting(*names: str) -> str:
        """The first of these the server has (MariaDB's name, then MySQL's)."""
        name = next((n for n in names if n in v), None)
        if name is None:
            return "unknown"
        return f"yes ({name} = {v[name]})" if _on(v[name]) else "no"

    def total(get: str) -> float:
        return sum(getattr(r, get) or 0.0 for r in intervals)

    # MySQL says only what new tables get (default_table_encryption), not what exists.
    tables = setting("innodb_encrypt_tables", "default_table_encryption")

    def through_cipher(pages: str, ciphered: str, verb: str) -> str:
        """What InnoDB's own counters say went through the cipher (MariaDB counts it)."""
        moved = total(pages)
        if moved <= 0 or all(getattr(r, ciphered) is None for r in intervals):
            return tables
        return f"{tables}; {min(total(ciphered) / moved, 1.0):.0%} of pages {verb} were"

    reads = through_cipher("pages_read", "pages_decrypted", "read")
    writes = through_cipher("pages_written", "pages_encrypted", "written")
    why = prerequisites.no_tls_because(v)
    tls = f"no ({why})" if why else ""
    connections = total("connections")
    handshakes = total("tls_handshakes")
    if not tls:
        tls = (
            f"{min(handshakes / connections, 1.0):.0%} of new connections"
            if connections > 0
            else "no new connection in the window"
        )
    binlog = (
        setting("encrypt_binlog", "binlog_encryption") if _on(v.get("log_bin")) else "no binary log"
    )
    return {
        "table_reads": reads + (" decrypted" if reads != tables else ""),
        "table_writes": writes + (" encrypted" if writes != tables else ""),
        "redo_log": setting("innodb_encrypt_log", "innodb_redo_log_encrypt"),
        "binary_log": binlog,
        "tls_handshakes": tls,
        "tls_bytes": tls if tls.startswith("no (") else "as its connections",
    }
