"""The data-in-transit study: one sandboxed server (or a user's, `--target`), reached over
plain TCP and over TLS or a tunnel.  It measures a MariaDB or MySQL server (this package's
modules) or a PostgreSQL one (postgresql/): the kind a profile's `[server] kinds` names, or
its target's (kind.py); the rest of encbench sees one study."""

from typing import Any

from encbench.checks import Check
from encbench.engine.progress import RunProgress
from encbench.engine.study import Rule, Study
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.servers import installs, pg_target
from encbench.servers.grants import NOTHING, TargetNeeds
from encbench.studies.definition import Here, RootNeed, Settings, StudyDefinition, TargetUse
from encbench.studies.in_transit import cells, kind, needs, options, report, sizing, target, upgrade
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.postgresql import cells as pg_cells
from encbench.studies.in_transit.postgresql import needs as pg_needs
from encbench.studies.in_transit.postgresql import target as pg_target_study
from encbench.studies.in_transit.postgresql.options import pg_transit_options
from encbench.studies.in_transit.postgresql.records import PgTransitRecord
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.study import TransitStudy


def _postgresql(profile: Profile) -> bool:
    return kind.measured(profile) == "postgresql"


def _make(store: ResultStore, profile: Profile, progress: RunProgress) -> Study:
    if _postgresql(profile):
        return pg_target_study.make(store, profile, progress)
    return TransitStudy(store, profile, progress)


def _rule(profile: Profile) -> Rule:
    return pg_transit_options(profile) if _postgresql(profile) else transit_options(profile)


def _cells(profile: Profile) -> list[Any]:
    return [*cells.cells(profile), *pg_cells.cells(profile)]


def _problem(profile: Profile) -> str | None:
    if kind.NAME in profile.studies and _postgresql(profile) and profile.calibration:
        return (
            "the in-transit study has no A/A calibration of PostgreSQL yet; calibrate with "
            'server.kinds = ["mariadb"], or remove "in-transit" from studies'
        )
    return kind.problem(profile) or options.problem(profile)


def _disk_bytes(profile: Profile) -> int:
    return pg_needs.disk_bytes(profile) if _postgresql(profile) else sizing.disk_bytes(profile)


def _memory_mb(profile: Profile) -> tuple[int, str]:
    return pg_needs.memory_mb(profile) if _postgresql(profile) else sizing.memory_mb(profile)


def _tools(profile: Profile) -> list[Check]:
    return pg_needs.needs(profile) if _postgresql(profile) else needs.needs(profile)


def _check(profile: Profile) -> None:
    if not _postgresql(profile):
        needs.check(profile)


def _root(profile: Profile) -> RootNeed | None:
    return pg_needs.root(profile) if _postgresql(profile) else needs.root(profile)


def _results_dir(profile: Profile, out: Any) -> None:
    if _postgresql(profile):
        pg_needs.check_out(profile, out)


def _optional_tools() -> list[tuple[Check, str]]:
    return [*needs.optional_tools(), *pg_needs.optional_tools()]


def _target_needs(profile: Profile) -> TargetNeeds:
    return NOTHING if _postgresql(profile) else needs.target_needs(profile)


def _plan_lines(profile: Profile) -> list[str]:
    if _postgresql(profile):
        return pg_target_study.plan_lines(profile) if profile.target else []
    return target.plan_lines(profile) if profile.target else cells.sandbox_plan_lines(profile)


STUDY = StudyDefinition(
    name=kind.NAME,
    words="in-transit",
    kinds=kind.KINDS,
    setup_words="one sandboxed server, reached over plain TCP and over TLS or a tunnel",
    variants=("plain TCP", "TLS or the cell's tunnel"),
    record=TransitRecord,
    kind_records=(PgTransitRecord,),
    make=_make,
    settings=Settings(
        key=options.SECTION,
        model=options.TransitSpec,
        rule=_rule,
        cells=_cells,
        validate=_problem,
        upgrade=upgrade.upgrade,
    ),
    here=Here(
        disk_bytes=_disk_bytes,
        memory_mb=_memory_mb,
        tools=_tools,
        check=_check,
        root=_root,
        results_dir=_results_dir,
        creates=(
            "1 sandboxed server (MariaDB, or the install's, or PostgreSQL: server and data "
            "directory under the results directory), "
            "TLS keys and certificates, tunnel processes (stunnel, an sshd and its ssh "
            "client) and, for a distance, network namespaces joined by a veth pair"
        ),
        optional_tools=_optional_tools,
    ),
    target=TargetUse(
        setup_words="the target, reached over plain TCP against its own TLS",
        needs=_target_needs,
        # A run makes one of them, on the target of its kind.
        databases=lambda results_dir: [
            target.database_name(results_dir),
            pg_target.database_name(results_dir),
        ],
    ),
    report=report.PART,
    install_families=(installs.MARIADB, installs.MYSQL),
    calibration=report.CALIBRATED,
    plan_lines=_plan_lines,
)

# What others may read of its published results (the estimate's unit costs).
__all__ = ["STUDY", "TransitCell", "TransitRecord", "transit_options"]
