"""The data-in-transit study: one sandboxed server (or a user's, `--target`), reached over
plain TCP and over TLS or a tunnel."""

from encbench.servers import installs
from encbench.studies.definition import Here, Settings, StudyDefinition, TargetUse
from encbench.studies.in_transit import cells, needs, options, report, sizing, target
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.study import TransitStudy

STUDY = StudyDefinition(
    name=TransitRecord.STUDY,
    words="in-transit",
    setup_words="one sandboxed server, reached over plain TCP and over TLS or a tunnel",
    variants=("plain TCP", "TLS or the cell's tunnel"),
    record=TransitRecord,
    make=TransitStudy,
    settings=Settings(
        key=options.SECTION,
        model=options.TransitSpec,
        rule=options.transit_options,
        cells=cells.cells,
        validate=options.problem,
    ),
    here=Here(
        disk_bytes=sizing.disk_bytes,
        memory_mb=sizing.memory_mb,
        tools=needs.needs,
        check=needs.check,
        root=needs.root,
        creates=(
            "1 sandboxed server (MariaDB, or the install's: server and data directory under "
            "the results directory), "
            "TLS keys and certificates, tunnel processes (stunnel, an sshd and its ssh "
            "client) and, for a distance, network namespaces joined by a veth pair"
        ),
        optional_tools=needs.optional_tools,
    ),
    target=TargetUse(
        setup_words="the target, reached over plain TCP against its own TLS",
        needs=needs.target_needs,
        databases=lambda results_dir: [target.database_name(results_dir)],
    ),
    report=report.PART,
    install_families=(installs.MARIADB, installs.MYSQL),
    calibration=report.CALIBRATED,
    plan_lines=lambda profile: (
        target.plan_lines(profile) if profile.target else cells.sandbox_plan_lines(profile)
    ),
)

# What others may read of its published results (the estimate's unit costs).
__all__ = ["STUDY", "TransitCell", "TransitRecord", "transit_options"]
