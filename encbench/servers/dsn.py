"""`--target mysql://user@host:port/` (or `mysql://user@localhost/?socket=/path`): the DSN
becomes the profile's `[target]` section, written into the profile text kept with the
results, so that --resume and `encbench report` see the same target.  A DSN never carries
the password: it would be in argv, where every user of the machine can read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from encbench.errors import BadInput

PASSWORD_FIX = "give the password in MYSQL_PWD or in an option file (--defaults-extra-file)"
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


def parse_dsn(dsn: str) -> dict[str, Any]:
    """The [target] fields of a DSN; BadInput names what is wrong and how to write it."""
    example = "e.g. mysql://bench@db.example:3306/"
    parts = urlsplit(dsn)
    if parts.scheme not in ("mysql", "mariadb"):
        raise BadInput(f"--target {dsn!r}: not a mysql:// DSN; write it as {example}")
    if parts.password is not None:
        raise BadInput(f"--target: the DSN holds a password, which argv would show: {PASSWORD_FIX}")
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
        raise BadInput(
            f"--target {dsn!r}: the port is not a number; write it as {example}"
        ) from None
    fields: dict[str, Any] = {"user": unquote(parts.username)}
    for name, values in parse_qs(parts.query, keep_blank_values=True).items():
        if name not in PARAMETERS or len(values) != 1 or not values[0]:
            raise BadInput(
                f"--target: unknown or repeated parameter {name!r}; the DSN takes "
                f"{', '.join(PARAMETERS)} once each"
            )
        fields[PARAMETERS[name]] = values[0]
    if "socket" in fields:
        if port is not None:
            raise BadInput("--target: a socket and a port: give one of them")
    else:
        if not parts.hostname:
            raise BadInput(f"--target {dsn!r}: no host; write it as {example}")
        fields["host"] = parts.hostname
        fields["port"] = port or 3306
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
    if defaults_file is not None:
        fields["defaults_extra_file"] = str(defaults_file.absolute())
    if keep:
        fields["keep"] = True
    return text.rstrip("\n") + "\n" + target_section(fields)
