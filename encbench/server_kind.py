"""What encbench knows of a kind of database server (MariaDB, PostgreSQL): one object, a
ServerKind, the face of the kind's package (`kinds/<name>.py`), listed once in
`kinds/__init__.py`.  Everything that used to ask "is this MariaDB or PostgreSQL?" asks the
kind instead: the DSN parser its schemes, a target its rules, readiness and clean-up, `doctor`
its tools, the sandbox registry how its server is recognised and stopped, the report its
name and version.

This module stands low in the house (profile, the DSN parser and the sandbox registry read
it); the kinds themselves stand above it and register here when `encbench.kinds` is
imported, as the studies register with the profile."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from encbench.checks import Check


def _no_rules(spec: Any) -> str | None:
    return None


@dataclass(frozen=True)
class Sandboxed:
    """How `encbench clean` recognises a sandbox's server of this kind that a killed run
    left behind, and stops it (servers/registry.py)."""

    # What the server's command line must name (the registry's entry → the mark).
    mark: Callable[[Any], str]
    # (command line, mark) → this is that sandbox's server.
    names: Callable[[list[str], str], bool]
    stop: Callable[[Any], None]  # (psutil.Process) → stopped, as the kind shuts down


@dataclass(frozen=True)
class TargetWays:
    """What encbench does with a server of this kind that it did not start (`--target`)."""

    # (TargetSpec, TargetNeeds) → None, or BadInput in one line (cannot log in, not ready).
    check: Callable[[Any, Any], None]
    # (TargetSpec, TargetNeeds, key algorithm) → `plan`'s lines, and whether the login worked.
    plan_lines: Callable[[Any, Any, str], tuple[list[str], bool]]
    # (TargetSpec, database names, results directory) → None, or BadInput for a database
    # of those names there that is not that run's (only the catalogue is read).
    ownership: Callable[[Any, list[str], str], None]
    # (TargetSpec) → a function that drops one recorded leftover database (`encbench clean
    # --target`), its owner's marker read again first.
    dropper: Callable[[Any], Callable[[Any], None]]


@dataclass(frozen=True)
class ServerKind:
    """A kind of server, as the rest of encbench sees it.  Every field without a default is
    required of a new kind."""

    # Required.
    name: str  # as studies and a target's `kind` name it: "mariadb"
    title: str  # as people read it: "MariaDB"
    # The DSN schemes of its targets (the first is the one encbench writes), its default
    # port, the query parameters a DSN of it may carry (→ the [target] key), and where its
    # password comes from (a DSN never carries one: argv would show it).
    schemes: tuple[str, ...]
    default_port: int
    dsn_parameters: Mapping[str, str]
    password_fix: str
    # Its server's version as installed on this machine, None where it is not.
    installed_version: Callable[[], str | None]
    # The tools every study of it needs on this machine (`doctor`; a run refuses without).
    tools: Callable[[], list[Check]]
    sandbox: Sandboxed
    target: TargetWays
    quote_identifier: Callable[[str], str]  # a database name in its SQL
    # A profile that measures it, for the one line that refuses a target of another kind.
    profiles_example: str

    # Optional.
    # What a target of it cannot have (TargetSpec → the problem, or None): e.g. PostgreSQL's
    # is reached over TCP only.
    target_rules: Callable[[Any], str | None] = _no_rules
    # Its clients read the password from an option file (--defaults-extra-file).
    option_file: bool = False
    # At-rest encryption it offers: its own ("tde") and/or the filesystem layer under it.
    at_rest_layers: tuple[str, ...] = ("filesystem",)
    # The load clients its studies drive, as the report's software line names them.
    load_clients: tuple[str, ...] = field(default_factory=tuple)

    @property
    def example_dsn(self) -> str:
        return f"{self.schemes[0]}://USER@HOST:{self.default_port}/"

    def drop_statement(self, database: str) -> str:
        return f"DROP DATABASE {self.quote_identifier(database)};"


_KINDS: dict[str, ServerKind] = {}


def register_kinds(kinds: tuple[ServerKind, ...]) -> None:
    """Called once, by `encbench.kinds`: the kinds encbench knows, in the order it lists them."""
    _KINDS.clear()
    _KINDS.update({k.name: k for k in kinds})


def kinds() -> list[ServerKind]:
    if not _KINDS:
        # The kinds stand above this module: their one list registers them when imported,
        # which a program that only starts a sandbox (or a killed run's helper) has not
        # done yet.
        importlib.import_module("encbench.kinds")
    if not _KINDS:
        raise RuntimeError("no server kind is registered: encbench.kinds registers none")
    return list(_KINDS.values())


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
