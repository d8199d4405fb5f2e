"""The data-in-transit study: one sandboxed server (or a user's, `--target`), reached over
plain TCP and over TLS or a tunnel."""

from encbench.studies.definition import StudyDefinition
from encbench.studies.in_transit import cells, needs, options, report, sizing, target
from encbench.studies.in_transit.records import TransitRecord
from encbench.studies.in_transit.study import TransitStudy

STUDY = StudyDefinition(
    name=TransitRecord.STUDY,
    words="in-transit",
    setup_words="one sandboxed server, reached over plain TCP and over TLS or a tunnel",
    creates=(
        "1 MariaDB sandbox (server and data directory under the results directory), TLS "
        "keys and certificates, tunnel processes (stunnel, an sshd and its ssh client) and, for a "
        "distance, network namespaces joined by a veth pair"
    ),
    variants=("plain TCP", "TLS or the cell's tunnel"),
    record=TransitRecord,
    make=TransitStudy,
    section=options.SECTION,
    options_model=options.TransitSpec,
    options=options.transit_options,
    cells=cells.cells,
    disk_bytes=sizing.disk_bytes,
    memory_mb=sizing.memory_mb,
    report=report.PART,
    needs=needs.needs,
    check=needs.check,
    takes_target=True,
    target_needs=needs.target_needs,
    target_setup_words="the target, reached over plain TCP against its own TLS",
    calibration=report.CALIBRATED,
    plan_lines=lambda profile: target.plan_lines(profile) if profile.target else [],
    optional_tools=needs.optional_tools,
    root=needs.root,
)
