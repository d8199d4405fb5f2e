"""The data-in-transit study: one sandboxed server (or a user's, `--target`), reached over
plain TCP and over TLS or a tunnel, of each kind the profile's `[server] kinds` (or its
target) names: MariaDB or MySQL (this package's modules) and PostgreSQL (postgresql/:
measured apart, kinds.py over both)."""

from encbench.servers.mariadb import installs
from encbench.studies.definition import StudyDefinition, TargetUse
from encbench.studies.in_transit import cells, kind, kinds, needs, options, report, target
from encbench.studies.in_transit import postgresql as postgresql_part
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.study import TransitStudy

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
    parts=(postgresql_part.PART,),
)

# What others may read of its published results (the estimate's unit costs).
__all__ = ["STUDY", "TransitCell", "TransitRecord", "transit_options"]
