"""The at-rest study over the kinds of server it measures: MariaDB's cells (this package)
and PostgreSQL's (postgresql/: a part of its own, with its runner, records and part of the
report), each where the profile's `[server] kinds` names the kind.  What `plan`, `doctor`
and the checks before a run read of the study (its Settings and Here) is here, over both:
their cells and rules side by side, their disk and set-up added up, the memory of the
larger (the kinds' servers never run at once)."""

from __future__ import annotations

from pathlib import Path

from encbench.checks import Check
from encbench.profile import Profile
from encbench.studies.at_rest import needs, pair, plan
from encbench.studies.at_rest.cells import MARIADB, measures
from encbench.studies.at_rest.postgresql import needs as pg_needs
from encbench.studies.at_rest.postgresql.options import KIND as POSTGRESQL
from encbench.studies.definition import RootNeed


def postgresql_alone(profile: Profile) -> bool:
    return measures(profile, POSTGRESQL) and not measures(profile, MARIADB)


def disk_bytes(profile: Profile) -> int:
    mariadb = pair.disk_bytes(profile) if measures(profile, MARIADB) else 0
    return mariadb + (pg_needs.disk_bytes(profile) if measures(profile, POSTGRESQL) else 0)


def memory_mb(profile: Profile) -> tuple[int, str]:
    found = [
        need(profile)
        for kind, need in ((MARIADB, pair.memory_mb), (POSTGRESQL, pg_needs.memory_mb))
        if measures(profile, kind)
    ]
    return max(found, default=(0, "no servers"))


def setup_s(profile: Profile) -> float:
    mariadb = pair.setup_s(profile) if measures(profile, MARIADB) else 0.0
    return mariadb + (pg_needs.setup_s(profile) if measures(profile, POSTGRESQL) else 0.0)


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
    if measures(profile, MARIADB):
        needs.check(profile)
    if measures(profile, POSTGRESQL):
        pg_needs.check(profile)


def results_dir(profile: Profile, out: Path) -> None:
    if measures(profile, POSTGRESQL):
        pg_needs.check_out(profile, out)


def plan_lines(profile: Profile) -> list[str]:
    out = plan.plan_lines(profile) if measures(profile, MARIADB) else []
    if not measures(profile, POSTGRESQL):
        return out
    own = pg_needs.plan_lines(profile)
    return out + (own if postgresql_alone(profile) else ["  PostgreSQL's cells:", *own])
