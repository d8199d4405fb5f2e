"""PostgreSQL in transit: one sandboxed PostgreSQL (or a user's, `--target`), reached by
pgbench over plain TCP and over TLS (new connections with -C, and queries on persistent
connections), on loopback and at emulated distances."""

from encbench.studies.definition import StudyDefinition
from encbench.studies.pg_transit import cells, needs, options, report, target
from encbench.studies.pg_transit.records import PgTransitRecord

STUDY = StudyDefinition(
    name=PgTransitRecord.STUDY,
    words="PostgreSQL in-transit",
    setup_words="one sandboxed PostgreSQL server, reached over plain TCP and over TLS",
    creates=(
        "1 PostgreSQL sandbox (server and data directory under the results directory), "
        "TLS keys and certificates and, for a distance, network namespaces joined by a "
        "veth pair"
    ),
    variants=("sslmode=disable", "TLS (the cell's sslmode)"),
    record=PgTransitRecord,
    make=target.make,
    section=options.SECTION,
    options_model=options.PgTransitSpec,
    options=options.pg_transit_options,
    cells=cells.cells,
    disk_bytes=needs.disk_bytes,
    memory_mb=needs.memory_mb,
    report=report.PART,
    needs=needs.needs,
    server="postgresql",
    optional_tools=needs.optional_tools,
    check_out=needs.check_out,
    validate=options.no_calibration,
    root=needs.root,
    takes_target=True,
    target_setup_words="the target, reached over plain TCP against its own TLS, in a "
    "database encbench creates and drops",
    plan_lines=lambda profile: target.plan_lines(profile) if profile.target else [],
)
