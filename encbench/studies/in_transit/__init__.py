"""The data-in-transit study: one sandboxed server (or a user's, `--target`), reached over
plain TCP and over TLS or a tunnel, of each kind the profile's `[server] kinds` (or its
target) names: MariaDB or MySQL (`[transit]`) and PostgreSQL (`[pg_transit]`), measured by
one runner (study.py), each kind's server through its side (side.py), into one record type,
summary and section."""

from encbench.servers.mariadb import installs
from encbench.servers.postgresql import target as pg_target
from encbench.studies.definition import KindCells, StudyDefinition, TargetUse
from encbench.studies.in_transit import cells, kind, kinds, needs, options, report, target
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.postgresql_target import postgresql_side
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.study import TransitStudy

POSTGRESQL = KindCells(
    study=kind.NAME,
    kind=kind.POSTGRESQL,
    # What profiles listed when PostgreSQL's cells were a study of their own.
    name="pg-in-transit",
    settings=options.PG_SETTINGS,
    cells_of=cells.postgresql_cells,
    side=postgresql_side,
    target=TargetUse(
        setup_words=(
            "the target, reached over plain TCP against its own TLS, in a "
            "database encbench creates and drops"
        ),
        databases=lambda results_dir: [pg_target.database_name(results_dir)],
    ),
)

STUDY = StudyDefinition(
    words="in-transit",
    kinds=kind.KINDS,
    setup_words=(
        "one sandboxed server of each kind, reached over plain TCP and over TLS or a tunnel"
    ),
    variants=("plain TCP", "TLS or the cell's tunnel"),
    record=TransitRecord,
    make=TransitStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=kinds.HERE,
    target=TargetUse(
        setup_words="the target, reached over plain TCP against its own TLS",
        needs=needs.target_needs,
        databases=lambda results_dir: [target.database_name(results_dir)],
        kinds=(kind.MARIADB,),
    ),
    report=report.PART,
    install_families=(installs.MARIADB, installs.MYSQL),
    calibration=report.CALIBRATED,
    plan_lines=kinds.plan_lines,
    other_kinds=(POSTGRESQL,),
)

# What others may read of its published results (the estimate's unit costs).
__all__ = ["STUDY", "TransitCell", "TransitRecord", "transit_options"]
