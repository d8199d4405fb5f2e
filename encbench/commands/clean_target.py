"""`encbench clean --target DSN`: drop the databases runs created on that server and could not
drop (servers/leftovers.py records them), each only while it still carries its run's marker.
The password comes as for every target command: MYSQL_PWD or --defaults-extra-file,
PGPASSWORD or ~/.pgpass; never the DSN or argv."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from encbench.errors import BadInput, EncbenchError
from encbench.profiles.profile import TargetSpec
from encbench.servers import dsn, leftovers, ways

Drop = Callable[[leftovers.Leftover], None]


def target_spec(text: str, defaults_file: Path | None) -> TargetSpec:
    """The DSN as `run --target` reads it, refused in one line where it is not one."""
    fields = dsn.parse_dsn(text)
    if defaults_file is not None:
        dsn.refuse_option_file(fields)
        fields["defaults_extra_file"] = str(defaults_file.absolute())
    try:
        return TargetSpec.model_validate(fields)
    except ValidationError as exc:
        raise BadInput(f"--target: {exc.errors()[0]['msg']}") from None


def dropper(spec: TargetSpec) -> Drop:
    """How one recorded database is dropped on `spec`'s server, its marker read again."""
    return ways.of(spec.kind).target.dropper(spec)


def drop_recorded(
    text: str, defaults_file: Path | None, drop: Drop | None = None
) -> tuple[list[str], bool]:
    """A line for each database recorded on the target (dropped, or why not with the
    statement), and whether any is still there."""
    spec = target_spec(text, defaults_file)
    found = leftovers.on(spec)
    if not found:
        return [f"nothing recorded as left on the target {leftovers.address(spec)}"], False
    drop = drop or dropper(spec)
    lines, failed = [], False
    for leftover in found:
        try:
            drop(leftover)
        except EncbenchError as exc:
            lines.append(leftover.words(str(exc)))
            failed = True
            continue
        leftovers.forget(leftover)
        lines.append(f"dropped database {leftover.database} on the target {leftover.address}")
    return lines, failed
