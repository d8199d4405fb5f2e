"""The in-transit study over the kinds of server it measures: MariaDB's and MySQL's cells
and PostgreSQL's, each where the profile's `[server] kinds` or its target names the kind.
What `plan`, `doctor` and the checks before a run read of the study (its Here) is
here, over both: their disk added up, the memory of the larger (the kinds' servers
never run at once); their cells and rules the definition adds up (StudyDefinition.cells,
rule)."""

from __future__ import annotations

from itertools import chain
from pathlib import Path

from encbench.engine.machine_needs import Here, RootNeed
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.studies.definition import each_kind, kinds_added, kinds_largest
from encbench.studies.in_transit import cells, needs, sizing, target
from encbench.studies.in_transit import postgresql_needs as pg_needs
from encbench.studies.in_transit import postgresql_target as pg_target_study
from encbench.studies.in_transit.kind import MARIADB, NAME, POSTGRESQL, measures


def tools(profile: Profile) -> list[Check]:
    found = each_kind(profile, NAME, {MARIADB: needs.needs, POSTGRESQL: pg_needs.needs})
    return list(chain.from_iterable(found))


def optional_tools() -> list[tuple[Check, str]]:
    return [*needs.optional_tools(), *pg_needs.optional_tools()]


def check(profile: Profile) -> None:
    if measures(profile, MARIADB):
        needs.check(profile)


def root(profile: Profile) -> RootNeed | None:
    """Both kinds need root for the same thing (a distance's network namespaces)."""
    mariadb = needs.root(profile) if measures(profile, MARIADB) else None
    return mariadb or (pg_needs.root(profile) if measures(profile, POSTGRESQL) else None)


def results_dir(profile: Profile, out: Path) -> None:
    if measures(profile, POSTGRESQL):
        pg_needs.check_out(profile, out)


def plan_lines(profile: Profile) -> list[str]:
    out: list[str] = []
    if measures(profile, MARIADB):
        out += target.plan_lines(profile) if profile.target else cells.sandbox_plan_lines(profile)
    if measures(profile, POSTGRESQL) and profile.target is not None:
        out += pg_target_study.plan_lines(profile)
    return out


# What `plan`, `doctor` and the checks before a run read of the study, over its kinds.
HERE = Here(
    disk_bytes=kinds_added(NAME, {MARIADB: sizing.disk_bytes, POSTGRESQL: pg_needs.disk_bytes}),
    memory_mb=kinds_largest(NAME, {MARIADB: sizing.memory_mb, POSTGRESQL: pg_needs.memory_mb}),
    tools=tools,
    check=check,
    root=root,
    results_dir=results_dir,
    creates=(
        "1 sandboxed server of each kind (MariaDB, or the install's; PostgreSQL) with its "
        "data directory under the results directory, "
        "TLS keys and certificates, tunnel processes (stunnel, an sshd and its ssh "
        "client) and, for a distance, network namespaces joined by a veth pair"
    ),
    optional_tools=optional_tools,
)
