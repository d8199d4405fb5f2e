"""`encbench plan`: what a run would create and measure, printed; nothing is created.  With a
target, the server is only read (variables, plugins, grants, the catalogue), and every
problem is listed with its fix rather than only the first."""

from __future__ import annotations

import os

from encbench.profile import Profile
from encbench.servers import prerequisites
from encbench.servers.owned import MARKER_TABLE, PLACEHOLDER_KEY
from encbench.servers.user_server import UserServer, password_from
from encbench.studies.at_rest.cells import cells
from encbench.studies.at_rest.dialects import Dialect, dialect_for
from encbench.studies.at_rest.table_sets import regime_problem, statements


def target_checks(profile: Profile) -> tuple[list[str], int, Dialect]:
    """Every problem of the target (read-only queries), its buffer pool in bytes and its
    family's SQL."""
    assert profile.target is not None
    server = UserServer(
        profile.target.connection(), password_from(profile.target.defaults_extra_file)
    )
    facts = prerequisites.read_facts(server)
    problems = facts.server_problems()
    example = ["encbench_000000000000_plain", "encbench_000000000000_encrypted"]
    problems += facts.privilege_problems(example)
    taken = server.query(
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE %s",
        ("encbench\\_%",),
    )
    for (name,) in taken:
        marked = server.query(
            "SELECT COUNT(*) FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (name, MARKER_TABLE),
        )[0][0]
        problems.append(
            f"note: {name} exists ({'an encbench run kept it' if marked else 'NOT encbench'}'s); "
            "a new run uses other names and leaves it alone"
        )
    pool = int(facts.variables.get("innodb_buffer_pool_size", "0"))
    return problems, pool, dialect_for(prerequisites.family(facts.variables))


def target_lines(profile: Profile) -> list[str]:
    """What `plan` says of a target beyond the cells: who it logs in as, every problem it
    found, every statement a run would send, and which cells the target's pool allows."""
    if profile.target is None:
        return []
    t = profile.target
    if "MYSQL_PWD" in os.environ:
        source = "MYSQL_PWD"
    elif password_from(t.defaults_extra_file) is not None:
        source = t.defaults_extra_file
    else:
        source = "none given"
    out = [f"target {t.socket or f'{t.host}:{t.port}'} as {t.user} (password: {source})"]
    problems, pool, dialect = target_checks(profile)
    out += [f"  check: {p}" for p in problems] or ["  checks: every prerequisite holds"]
    out.append("would create and run, in this order:")
    out += [f"  {s}" for s in statements(profile, PLACEHOLDER_KEY, dialect)]
    for c in cells(profile):
        why = regime_problem(c.regime, pool, profile)
        out.append(f"  cell {c.label}: " + (f"skipped — {why}" if why else "measured"))
    return out
