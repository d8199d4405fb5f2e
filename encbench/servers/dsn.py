"""`--target mysql://user@host:port/` (or `mysql://user@localhost/?socket=/path`), or
`postgresql://user@host:port/` for a PostgreSQL study: the DSN becomes the profile's
`[target]` section, written into the profile text kept with the results, so that --resume
and `encbench report` see the same target.  A DSN never carries the password: it would be
in argv, where every user of the machine can read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from encbench.errors import BadInput

MAX_PORT = 65535  # TCP's

PASSWORD_FIX = "give the password in MYSQL_PWD or in an option file (--defaults-extra-file)"
PG_PASSWORD_FIX = "give the password in PGPASSWORD or in a password file (PGPASSFILE, ~/.pgpass)"
MYSQL_SCHEMES = ("mysql", "mariadb")
PG_SCHEMES = ("postgresql", "postgres")
# Query parameters a DSN may carry, as the client tools name them → the [target] key.
PARAMETERS = {
    "socket": "socket",
    "ssl-ca": "ssl_ca",
    "ssl-cert": "ssl_cert",
    "ssl-key": "ssl_key",
    # Not a client tool's: the server's host over ssh, for its CPU ([target] ssh).
    "ssh": "ssh",
    "ssh-config": "ssh_config",
}
# A postgresql:// DSN's, in libpq's words: the CA of the server's certificate (for
# sslmode=verify-full) and a client certificate where the server asks for one.
PG_PARAMETERS = {"sslrootcert": "ssl_ca", "sslcert": "ssl_cert", "sslkey": "ssl_key"}


def parse_dsn(dsn: str) -> dict[str, Any]:
    """The [target] fields of a DSN; BadInput names what is wrong and how to write it."""
    parts = urlsplit(dsn)
    postgresql = parts.scheme in PG_SCHEMES
    example = (
        "e.g. postgresql://bench@db.example:5432/"
        if postgresql
        else "e.g. mysql://bench@db.example:3306/"
    )
    if parts.scheme not in MYSQL_SCHEMES + PG_SCHEMES:
        raise BadInput(
            f"--target {dsn!r}: not a mysql:// or postgresql:// DSN; write it as "
            "mysql://bench@db.example:3306/ (MariaDB) or postgresql://bench@db.example:5432/"
        )
    if parts.password is not None:
        fix = PG_PASSWORD_FIX if postgresql else PASSWORD_FIX
        raise BadInput(f"--target: the DSN holds a password, which argv would show: {fix}")
    if not parts.username:
        raise BadInput(f"--target {dsn!r}: no user; write it as {example}")
    if parts.path not in ("", "/"):
        raise BadInput(
            f"--target {dsn!r}: no database in the DSN, please — encbench creates and names "
            f"its own; write it as {example}"
        )
    try:
        port = parts.port
    except ValueError:
        port = -1  # urllib says "out of range" and "not a number" alike: told apart below
    if port is not None and not 1 <= port <= MAX_PORT:
        given = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        what = (
            f"port {given} is out of range 1–{MAX_PORT}"
            if given.isdigit()
            else (f"the port {given!r} is not a number")
        )
        raise BadInput(f"--target {dsn!r}: {what}; write it as {example}")
    fields: dict[str, Any] = {"user": unquote(parts.username)}
    if postgresql:
        fields["kind"] = "postgresql"
    known = PG_PARAMETERS if postgresql else PARAMETERS
    for name, values in parse_qs(parts.query, keep_blank_values=True).items():
        if name not in known or len(values) != 1 or not values[0]:
            raise BadInput(
                f"--target: unknown or repeated parameter {name!r}; the DSN takes "
                f"{', '.join(known)} once each"
            )
        fields[known[name]] = values[0]
    if "socket" in fields:
        if port is not None:
            raise BadInput("--target: a socket and a port: give one of them")
    else:
        if not parts.hostname:
            raise BadInput(f"--target {dsn!r}: no host; write it as {example}")
        fields["host"] = parts.hostname
        fields["port"] = port or (5432 if postgresql else 3306)
    return fields


def target_section(fields: dict[str, Any]) -> str:
    """The fields as a TOML [target] table (JSON strings are TOML basic strings)."""
    lines = ["", "# Added by `encbench run --target`.", "[target]"]
    for key, value in fields.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{key} = {value}")
        else:
            lines.append(f"{key} = {json.dumps(str(value))}")
    return "\n".join(lines) + "\n"


def with_target(
    text: str, has_target: bool, dsn: str | None, defaults_file: Path | None, keep: bool
) -> str:
    """The profile text with the command line's target options written in."""
    if dsn is None:
        if has_target or not (defaults_file or keep):
            if has_target and (defaults_file or keep):
                raise BadInput(
                    "the profile has its own [target]: write defaults_extra_file and keep "
                    "there instead of on the command line"
                )
            return text
        raise BadInput(
            "--defaults-extra-file and --keep-databases go with a target: add --target DSN"
        )
    if has_target:
        raise BadInput("the profile has a [target] and --target gives another: give one of them")
    fields = parse_dsn(dsn)
    if defaults_file is not None and fields.get("kind") == "postgresql":
        raise BadInput(
            f"--defaults-extra-file is MariaDB's option file, not PostgreSQL's: {PG_PASSWORD_FIX}"
        )
    if defaults_file is not None:
        fields["defaults_extra_file"] = str(defaults_file.absolute())
    if keep:
        fields["keep"] = True
    return text.rstrip("\n") + "\n" + target_section(fields)
