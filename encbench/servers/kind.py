"""What encbench knows of a kind of database server, in two parts of its package
`servers/<name>/`:

- its facts (ServerKind): names, DSN schemes, how its sandboxed server is recognised and
  stopped, its version as installed — what the DSN parser, the sandbox registry, `encbench
  clean` and the profile read, low in the house;
- its ways (KindWays, its `ways.py`): the tools a study of it needs, and what encbench does
  with a server of it that it did not start (log in, check grants, plan, drop its own
  leftovers) — built on the target and readiness modules, high in the house.

A kind is one package, `servers/<name>/`: its facts in its `__init__.py` (KIND, importing
only the low parts: proc, errors), its ways in its `ways.py` (WAYS), its sandbox, target and
counters beside them; and one line in `server_kind.KINDS`.  The facts name the ways'
module, so a high part (servers/ways.py's `of`) finds them without the DSN parser or the
profile, which read the facts, importing the target modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


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
class ServerKind:
    """A kind of server's facts.  Every field without a default is required of a new kind."""

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
    sandbox: Sandboxed
    quote_identifier: Callable[[str], str]  # a database name in its SQL
    # A profile that measures it, for the one line that refuses a target of another kind.
    profiles_example: str
    # The module whose WAYS (a KindWays) are its ways: "encbench.servers.mariadb.ways".
    ways: str

    # Optional.
    # What a target of it cannot have (TargetSpec → the problem, or None): e.g. PostgreSQL's
    # is reached over TCP only.
    target_rules: Callable[[Any], str | None] = _no_rules
    # Its clients read the password from an option file (--defaults-extra-file).
    option_file: bool = False
    # The load clients its studies drive, as the report's software line names them.
    load_clients: tuple[str, ...] = field(default_factory=tuple)
    # sysbench's options that reach a server of it ((servers/target.Connection, tls) → its
    # driver's argv), where its studies drive sysbench: servers/<name>/sysbench.py.
    sysbench_connection: Callable[[Any, bool], list[str]] | None = None
    # Its server's process names (/proc/PID/comm) in each of its releases: a process read
    # over ssh for a target's CPU must be one (servers/remote_cpu.py), not a stale pid's.
    server_processes: tuple[str, ...] = ()

    @property
    def example_dsn(self) -> str:
        return f"{self.schemes[0]}://USER@HOST:{self.default_port}/"

    def drop_statement(self, database: str) -> str:
        return f"DROP DATABASE {self.quote_identifier(database)};"
