"""The at-rest study over the kinds of server it measures: MariaDB's cells and PostgreSQL's
(its side: postgresql_side.py), each where the profile's `[server] kinds` names the kind.
What `plan`, `doctor` and the checks before a run read of the study's Here is here, over
both: their disk and
set-up added up, the memory of the larger (the kinds' servers never run at once); their
cells and rules the definition adds up (StudyDefinition.cells, rule)."""

from __future__ import annotations

from pathlib import Path

from encbench.engine.machine_needs import Here, RootNeed
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.studies.at_rest import needs, pair, plan
from encbench.studies.at_rest import postgresql_needs as pg_needs
from encbench.studies.at_rest.cells import MARIADB, measures
from encbench.studies.at_rest.postgresql_options import KIND as POSTGRESQL
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.definition import each_kind, kinds_added, kinds_largest

NAME = RunRecord.STUDY


def postgresql_alone(profile: Profile) -> bool:
    return measures(profile, POSTGRESQL) and not measures(profile, MARIADB)


def tools(profile: Profile) -> list[Check]:
    """MariaDB's (perf, where asked); PostgreSQL's where it is the only kind (the study is
    then left out without them, as its runner leaves its cells out beside MariaDB's)."""
    found = needs.needs(profile) if measures(profile, MARIADB) else []
    return found + (pg_needs.needs(profile) if postgresql_alone(profile) else [])


def optional_cells(profile: Profile) -> dict[str, list[Check]]:
    """PostgreSQL's beside MariaDB's: without them its runner leaves its cells out, with
    why (what `tools` asks where PostgreSQL is the only kind)."""
    if measures(profile, POSTGRESQL) and not postgresql_alone(profile):
        return {"its PostgreSQL cells": pg_needs.needs(profile)}
    return {}


def optional(profile: Profile) -> bool:
    """Left out, with why, where PostgreSQL alone is measured and this machine cannot."""
    return postgresql_alone(profile)


def root(profile: Profile) -> RootNeed | None:
    mariadb = needs.root(profile) if measures(profile, MARIADB) else None
    if not measures(profile, POSTGRESQL):
        return mariadb
    postgresql = pg_needs.root(profile)
    if mariadb is None or mariadb.without is None:
        return mariadb or postgresql
    return RootNeed(
        f"{mariadb.what}, memory cgroups", without=f"{mariadb.without} and {postgresql.without}"
    )


def check(profile: Profile) -> None:
    # Each kind's check raises BadInput with its fix.
    each_kind(profile, NAME, {MARIADB: needs.check, POSTGRESQL: pg_needs.check})


def results_dir(profile: Profile, out: Path) -> None:
    if measures(profile, POSTGRESQL):
        pg_needs.check_out(profile, out)


def plan_lines(profile: Profile) -> list[str]:
    out = plan.plan_lines(profile) if measures(profile, MARIADB) else []
    if not measures(profile, POSTGRESQL):
        return out
    own = pg_needs.plan_lines(profile)
    return out + (own if postgresql_alone(profile) else ["  PostgreSQL's cells:", *own])


# What `plan`, `doctor` and the checks before a run read of the study, over its kinds.
HERE = Here(
    disk_bytes=kinds_added(NAME, {MARIADB: pair.disk_bytes, POSTGRESQL: pg_needs.disk_bytes}),
    memory_mb=kinds_largest(NAME, {MARIADB: pair.memory_mb, POSTGRESQL: pg_needs.memory_mb}),
    tools=tools,
    check=check,
    optional=optional,
    optional_cells=optional_cells,
    root=root,
    results_dir=results_dir,
    creates=(
        "2 sandboxed servers of each kind (MariaDB, or the install's; PostgreSQL) with "
        "their data directories under the results directory, "
        "memory cgroups where root allows, ext4 images on loop devices for a filesystem "
        "layer, the page cache dropped before each io-bound run, a key server (OpenBao) "
        "where TDE's keys come from one"
    ),
    optional_tools=needs.optional_tools,
    setup_s=kinds_added(NAME, {MARIADB: pair.setup_s, POSTGRESQL: pg_needs.setup_s}),
)
