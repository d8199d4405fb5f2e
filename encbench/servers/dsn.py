"""`--target SCHEME://user@host:port/`, the scheme naming the server's kind (its facts'
`schemes`, servers/server_kind.py; a kind's `dsn_parameters` may add a socket path or TLS
files as query parameters): the DSN becomes the profile's `[target]` section, written into the
profile text kept with the results, so that --resume and `encbench report` see the same
target.  A DSN never carries the password: it would be in argv, where every user of the
machine can read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from encbench.errors import BadInput
from encbench.servers import server_kind

MAX_PORT = 65535  # TCP's


def _schemes() -> str:
    return " or ".join(f"{k.schemes[0]}://" for k in server_kind.kinds())


def _examples() -> str:
    return " or ".join(
        f"{k.schemes[0]}://bench@db.example:{k.default_port}/ ({k.title})"
        for k in server_kind.kinds()
    )


def refuse_option_file(fields: dict[str, Any]) -> None:
    """--defaults-extra-file is MariaDB's (and MySQL's) option file: a target of another
    kind takes its password from its own places."""
    kind = server_kind.named(fields.get("kind", server_kind.names()[0]))
    if not kind.option_file:
        raise BadInput(
            f"--defaults-extra-file is MariaDB's option file, not {kind.title}'s: "
            f"{kind.password_fix}"
        )


def parse_dsn(dsn: str) -> dict[str, Any]:
    """The [target] fields of a DSN; BadInput names what is wrong and how to write it."""
    parts = urlsplit(dsn)
    kind = server_kind.of_scheme(parts.scheme)
    if kind is None:
        raise BadInput(f"--target {dsn!r}: not a {_schemes()} DSN; write it as {_examples()}")
    example = f"e.g. {kind.schemes[0]}://bench@db.example:{kind.default_port}/"
    if parts.password is not None:
        raise BadInput(
            f"--target: the DSN holds a password, which argv would show: {kind.password_fix}"
        )
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
    if kind is not server_kind.kinds()[0]:
        fields["kind"] = kind.name
    known = kind.dsn_parameters
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
        fields["port"] = port or kind.default_port
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
        refuse_option_file(fields)
        fields["defaults_extra_file"] = str(defaults_file.absolute())
    if keep:
        fields["keep"] = True
    return text.rstrip("\n") + "\n" + target_section(fields)
