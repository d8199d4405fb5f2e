"""A server encbench did not start — the user's own, perhaps on another host — as a Target
(servers/target.py): connected to over TCP or its socket, asked for its status counters;
no process id (its CPU cannot be read from here) and no data directory (its files cannot
be scanned).  encbench never restarts it and changes none of its global variables.

The password comes from MYSQL_PWD, as the client tools read it, or from the [client]
section of an option file (--defaults-extra-file); never from argv or the profile.  sysbench
1.0.20 has no option-file flag and takes a password only as --mysql-password on its command
line, but libmariadb, which it links, reads MYSQL_PWD when it is given none: sysbench gets
the password in its environment (which only its own user and root can read), as the
in-transit study's clients already do (servers/mariadb/tls.client_env).
"""

from __future__ import annotations

import configparser
import contextlib
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pymysql

from encbench import stopping
from encbench.errors import BadInput, ServerError
from encbench.servers.mariadb.queries import Queries
from encbench.servers.target import Connection


class TargetLogin(Protocol):
    """What logging in to the profile's target needs of it (its TargetSpec): said here so
    that servers/ does not import the profile above it."""

    @property
    def defaults_extra_file(self) -> str: ...

    def connection(self) -> Connection: ...


CONNECT_TIMEOUT_S = 10.0
QUERY_TIMEOUT_S = 600.0
STATUS_TIMEOUT_S = 60.0
STOPPING_QUERY_TIMEOUT_S = 60.0  # once a stop was asked for: a drop that takes longer is recorded
ACCESS_DENIED = frozenset({1044, 1045, 1142, 1227})  # db, user, table, privilege
# The client's own: no socket file, no server at the host and port, an unknown host.
UNREACHABLE = frozenset({2002, 2003, 2005})


def password_from(defaults_file: str, environ: dict[str, str] | None = None) -> str | None:
    """MYSQL_PWD first (the client tools' order), else the option file's [client] password;
    None when neither gives one (a user without a password, or socket authentication)."""
    env = os.environ if environ is None else environ
    if "MYSQL_PWD" in env:
        return env["MYSQL_PWD"]
    if not defaults_file:
        return None
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    path = Path(defaults_file)
    try:
        # !include lines are the client library's, not INI: left out, as is what they include.
        text = "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("!")
        )
        parser.read_string(text, str(path))
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise BadInput(f"cannot read the option file {path}: {exc}; check the path") from None
    # The client library reads these groups in this order and a later value wins.
    for section in ("client-mariadb", "client-server", "client"):
        if parser.has_option(section, "password"):
            value = (parser.get(section, "password") or "").strip()
            # One pair of matching quotes is the option file's, not the password's.
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            return value
    raise BadInput(f"the option file {path} has no password in its [client] section; add one")


@dataclass
class UserServer(Queries):
    """The user's server as a Target, its current database one of encbench's own."""

    where: Connection  # its address and user (TargetSpec.connection)
    password: str | None
    database: str = ""  # the clients' current database, one of encbench's own
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    query_timeout_s: float = QUERY_TIMEOUT_S
    status_timeout_s: float = STATUS_TIMEOUT_S
    name: str = ""  # as messages and the report call it: "target HOST:PORT"

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"target {self.where.socket or f'{self.where.host}:{self.where.port}'}"

    @classmethod
    def of_target(cls, spec: TargetLogin) -> UserServer:
        """The server a profile's [target] names, with the password the client tools would
        use (password_from)."""
        return cls(spec.connection(), password_from(spec.defaults_extra_file))

    def on(self, database: str) -> UserServer:
        """The same server, with `database` as the one its clients use."""
        return dataclasses.replace(self, database=database)

    # -- as a Target ---------------------------------------------------------------------
    pid: int | None = None  # its process is not ours to read
    datadir: Path | None = None  # nor are its files

    def endpoint(self) -> Connection:
        return dataclasses.replace(self.where, database=self.database)

    def client_env(self) -> dict[str, str] | None:
        """For sysbench: libmariadb reads MYSQL_PWD when given no password (module doc)."""
        if self.password is None:
            return None
        return {"MYSQL_PWD": self.password, "HOME": os.environ.get("HOME", "/")}

    def _open(self, database: str | None, timeout_s: float) -> Any:
        where: dict[str, Any] = (
            {"unix_socket": str(self.where.socket)}
            if self.where.socket is not None
            else {"host": self.where.host, "port": self.where.port}
        )
        return pymysql.connect(
            **where,
            user=self.where.user,
            password=self.password or "",
            database=database or None,
            connect_timeout=self.connect_timeout_s,
            read_timeout=timeout_s,
            write_timeout=timeout_s,
            autocommit=True,
            # The harness's own reads are no TLS handshakes on the server under study; where
            # the server demands TLS it says so, and the error names it.
            ssl_disabled=True,
        )

    @contextlib.contextmanager
    def cursor(self, database: str | None = None, timeout_s: float | None = None) -> Iterator[Any]:
        read_timeout = timeout_s or self.query_timeout_s
        if stopping.requested():  # its clean-up (the drops) must not hold a stop for long
            read_timeout = min(read_timeout, STOPPING_QUERY_TIMEOUT_S)
        try:
            with self._open(database, read_timeout) as conn, conn.cursor() as cur:
                yield cur
        except pymysql.MySQLError as exc:
            raise self._failure(exc) from exc

    def check_alive(self, timeout_s: float | None = None) -> None:
        self.query("SELECT 1", timeout_s=timeout_s or self.status_timeout_s)

    def _failure(self, exc: pymysql.MySQLError) -> ServerError | BadInput:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        text = exc.args[-1] if exc.args else str(exc)
        if code in ACCESS_DENIED:
            return BadInput(
                f"{self.name}: {text} (error {code}): check the user and its password "
                "(MYSQL_PWD or --defaults-extra-file) and its privileges (`encbench plan` "
                "lists them)"
            )
        if code in UNREACHABLE:
            return BadInput(
                f"{self.name}: {text}: check the target's host and port (or socket) and that "
                "its server is running"
            )
        if code is not None and code < 2000:
            return ServerError(f"{self.name} refused a statement: {text} (error {code})")
        return ServerError(f"{self.name}: {text}")
