"""The kinds of server encbench measures, each a module whose face is its ServerKind
(`KIND`, server_kind.py), listed once below.  A new kind is its module (its sandbox, target,
tools) and one line in KINDS; the studies name the kind they measure, and everything else
asks the kind."""

from __future__ import annotations

from encbench.kinds import mariadb, postgresql
from encbench.server_kind import ServerKind, register_kinds

# The first is the default: a target without a kind, and registry entries written before
# kinds existed, are MariaDB's.
KINDS: tuple[ServerKind, ...] = (mariadb.KIND, postgresql.KIND)
register_kinds(KINDS)
