"""PostgreSQL in transit: one sandboxed PostgreSQL (or a user's, `--target`), reached by
pgbench over plain TCP and over TLS (new connections with -C, and queries on persistent
connections), on loopback and at emulated distances."""

from encbench.profile import no_calibration
from encbench.servers import pg_target
from encbench.studies.definition import Here, Settings, StudyDefinition, TargetUse
from encbench.studies.pg_transit import cells, needs, options, report, target
from encbench.studies.pg_transit.records import PgTransitRecord

STUDY = StudyDefinition(
    name=PgTransitRecord.STUDY,
    words="PostgreSQL in-transit",
    kinds=("postgresql",),
    setup_words="one sandboxed PostgreSQL server, reached over plain TCP and over TLS",
    variants=("sslmode=disable", "TLS (the cell's sslmode)"),
    record=PgTransitRecord,
    make=target.make,
    settings=Settings(
        key=options.SECTION,
        model=options.PgTransitSpec,
        rule=options.pg_transit_options,
        cells=cells.cells,
        validate=no_calibration(PgTransitRecord.STUDY),
    ),
    here=Here(
        disk_bytes=needs.disk_bytes,
        memory_mb=needs.memory_mb,
        tools=needs.needs,
        root=needs.root,
        results_dir=needs.check_out,
        creates=(
            "1 PostgreSQL sandbox (server and data directory under the results directory), "
            "TLS keys and certificates and, for a distance, network namespaces joined by a "
            "veth pair"
        ),
        optional_tools=needs.optional_tools,
    ),
    target=TargetUse(
        setup_words=(
            "the target, reached over plain TCP against its own TLS, in a "
            "database encbench creates and drops"
        ),
        databases=lambda results_dir: [pg_target.database_name(results_dir)],
    ),
    report=report.PART,
    plan_lines=lambda profile: target.plan_lines(profile) if profile.target else [],
)
