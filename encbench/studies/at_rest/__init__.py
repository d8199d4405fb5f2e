"""The data-at-rest study: a plain and an encrypted sandboxed server, identical but for
encryption (or a user's server, `--target`), of each kind the profile's `[server] kinds`
names: MariaDB (InnoDB's TDE and/or the filesystem layer, sysbench's mysql driver,
`[measure]`) and PostgreSQL (the filesystem layer alone, pgbench and sysbench's pgsql
driver, `[pg_at_rest]`), measured by one runner (study.py), each kind's servers through its
side (side.py), into one record type, summary and section."""

from encbench.servers.mariadb import installs
from encbench.studies.at_rest import (
    cells,
    kinds,
    needs,
    options,
    postgresql_options,
    report,
    table_sets,
)
from encbench.studies.at_rest.cells import configuration
from encbench.studies.at_rest.floor import page_us
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.postgresql_options import KIND as POSTGRESQL
from encbench.studies.at_rest.postgresql_options import measured as measures_postgresql
from encbench.studies.at_rest.postgresql_options import pg_at_rest_options
from encbench.studies.at_rest.postgresql_side import PgAtRest
from encbench.studies.at_rest.records import MARIADB, CellKey, RunRecord
from encbench.studies.at_rest.study import AtRestStudy
from encbench.studies.definition import KindCells, StudyDefinition, TargetUse

POSTGRESQL_CELLS = KindCells(
    study=RunRecord.STUDY,
    kind=postgresql_options.KIND,
    # What profiles listed when PostgreSQL's cells were a study of their own.
    name="pg-at-rest",
    settings=postgresql_options.SETTINGS,
    cells_of=postgresql_options.cells,
    side=PgAtRest,
)

STUDY = StudyDefinition(
    words="data-at-rest",
    kinds=("mariadb",),
    setup_words="two sandboxed servers (plain, encrypted) of each kind on this machine",
    variants=("plain server", "encrypted server"),
    record=RunRecord,
    make=AtRestStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=kinds.HERE,
    target=TargetUse(
        setup_words=(
            "two table sets in two databases on the target, plain (MariaDB's ENCRYPTED=NO, "
            "MySQL's ENCRYPTION='N') against encrypted (ENCRYPTED=YES, ENCRYPTION='Y')"
        ),
        needs=needs.target_needs,
        databases=lambda results_dir: list(table_sets.database_names(results_dir).values()),
        kinds=("mariadb",),
    ),
    report=report.PART,
    install_families=(installs.MARIADB, installs.MYSQL),
    calibration=report.CALIBRATED,
    plan_lines=kinds.plan_lines,
    other_kinds=(POSTGRESQL_CELLS,),
)

# What others may read of its published results (the estimate's unit costs): its records,
# the configuration a cell ran, its settings, and the cipher's cost per page; PostgreSQL's
# settings; the kinds its cells name.
__all__ = [
    "MARIADB",
    "POSTGRESQL",
    "STUDY",
    "CellKey",
    "RunRecord",
    "configuration",
    "measure_options",
    "measures_postgresql",
    "page_us",
    "pg_at_rest_options",
]  # fmt: skip
