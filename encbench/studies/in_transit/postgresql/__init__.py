"""The in-transit study's PostgreSQL cells: one sandboxed PostgreSQL (or a user's,
`--target`), reached by pgbench over plain TCP and over TLS (new connections with -C, and
queries on persistent connections) and by psql's COPY, on loopback and at emulated
distances.  Measured apart from MariaDB's (their own runner, records and part of the
report: a KindPart of the study), where `[server] kinds` names PostgreSQL or the target is
a PostgreSQL server."""

from encbench.servers.postgresql import target as pg_target
from encbench.studies.definition import KindPart, TargetUse
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.postgresql import cells, options, report, target
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

PART = KindPart(
    study=kind.NAME,
    kind=kind.POSTGRESQL,
    words="PostgreSQL in-transit",
    record=PgTransitRecord,
    make=target.make,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    report=report.PART,
    target=TargetUse(
        setup_words=(
            "the target, reached over plain TCP against its own TLS, in a "
            "database encbench creates and drops"
        ),
        databases=lambda results_dir: [pg_target.database_name(results_dir)],
    ),
)
