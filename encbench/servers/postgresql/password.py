"""The password of a PostgreSQL target's login: PGPASSWORD, else the user's password file
(PGPASSFILE, else ~/.pgpass: its first line for this host, port and user, for any database
or the maintenance one), as libpq itself looks for it; never from argv or the profile.  It
reaches encbench's own connections, psql and pgbench only through a password file of
encbench's own, mode 0600 from the start (servers/postgresql/target.py: in the run's private
directory, or a private temporary one)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from encbench.errors import BadInput
from encbench.servers import keys


class PgLogin(Protocol):
    """What the PostgreSQL target's modules read of the profile's `[target]` (profiles/profile.py's
    PgLogin is one): servers/ stays below the profile, as MariaDB's target does with
    servers/target.Connection."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def user(self) -> str: ...
    @property
    def ssl_ca(self) -> str: ...
    @property
    def ssl_cert(self) -> str: ...
    @property
    def ssl_key(self) -> str: ...


# The database every cluster has, where the login's checks and CREATE/DROP DATABASE run.
MAINTENANCE_DATABASE = "postgres"


def _pgpass_fields(line: str) -> list[str]:
    """A password file line's five fields (`\\:` and `\\\\` escaped, as libpq reads them)."""
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def user_passfile(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("PGPASSFILE"):
        return Path(env["PGPASSFILE"])
    return Path(env.get("HOME", "/")) / ".pgpass"


def password_from(spec: PgLogin, environ: Mapping[str, str] | None = None) -> str | None:
    """PGPASSWORD, else the first line of the user's password file that matches the target's
    host, port and user, for any database or the maintenance one (encbench's own is not
    named yet); None without either."""
    env = os.environ if environ is None else environ
    if env.get("PGPASSWORD"):
        return env["PGPASSWORD"]
    path = user_passfile(env)
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    wanted = (spec.host, str(spec.port), MAINTENANCE_DATABASE, spec.user)
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pgpass_fields(line)
        if len(fields) == 5 and all(f in ("*", w) for f, w in zip(fields[:4], wanted, strict=True)):
            return fields[4]
    return None


def password_source(spec: PgLogin) -> str:
    if os.environ.get("PGPASSWORD"):
        return "PGPASSWORD"
    if password_from(spec) is not None:
        return "the password file"
    return "none given"


def write_passfile(directory: Path, spec: PgLogin, password: str | None) -> Path:
    """The run's own libpq password file for the login (0600 from the start); empty without a
    password (libpq then sends none, and a server that asks for one says so)."""
    if password is not None and "\n" in password:
        raise BadInput("the target's password holds a line break, which libpq cannot read")
    text = "" if password is None else f"*:*:*:{_escaped(spec.user)}:{_escaped(password)}\n"
    return keys.write_secret(directory / "pg-target.pgpass", text)


def _escaped(field: str) -> str:
    """A password file field: its backslashes and colons escaped, as libpq reads them."""
    return field.replace("\\", "\\\\").replace(":", "\\:")
