"""The kinds of server encbench knows, listed once (KINDS), and the registry every part asks
instead of "is this MariaDB or PostgreSQL?": the DSN parser its schemes, a target its
rules, the sandbox registry how its server is recognised and stopped, the report its name
and version.  A kind is a package, `servers/<name>/` (servers/kind.py says what it
holds); this registry imports only its facts (its `__init__.py`), and its ways (its
`ways.py`) are found by the high parts through servers/ways.py's `of`."""

from __future__ import annotations

from encbench.servers import mariadb, postgresql
from encbench.servers.kind import ServerKind

# The first is the default: a target without a kind, and registry entries written before
# kinds existed, are MariaDB's.
KINDS: tuple[ServerKind, ...] = (mariadb.KIND, postgresql.KIND)

_KINDS: dict[str, ServerKind] = {k.name: k for k in KINDS}


def register_kinds(kinds: tuple[ServerKind, ...]) -> None:
    """The kinds encbench knows, in the order it lists them (KINDS; a test adds a toy)."""
    _KINDS.clear()
    _KINDS.update({k.name: k for k in kinds})


def kinds() -> list[ServerKind]:
    return list(_KINDS.values())


def installed_versions() -> dict[str, str | None]:
    """Each kind's version on this machine under its name (None where it is not installed):
    what every results directory's environment.json records."""
    return {kind.name: kind.installed_version() for kind in kinds()}


def names() -> list[str]:
    return [k.name for k in kinds()]


def named(name: str) -> ServerKind:
    """The kind of that name; a name no kind has is a defect (profiles validate theirs)."""
    for kind in kinds():
        if kind.name == name:
            return kind
    raise KeyError(f"no server kind {name!r} is registered")


def find(name: str) -> ServerKind | None:
    """The kind of that name, or None (a registry entry written by another version)."""
    return next((k for k in kinds() if k.name == name), None)


def of_scheme(scheme: str) -> ServerKind | None:
    """The kind a DSN's scheme names (mysql:// and mariadb:// → MariaDB), or None."""
    return next((k for k in kinds() if scheme in k.schemes), None)
