"""The rejoin study: node 2 of a 2-node Galera cluster rejoining by IST or by SST, on the
replication study's two clusters (plain, and with Galera's own TLS, socket.ssl_*), whose
every node lives on its own emulated host (galera_pair_studies.py)."""

from encbench import galera_pair_studies as pairs
from encbench.profile import Profile, no_calibration
from encbench.studies.definition import Here, RootNeed, Settings, StudyDefinition
from encbench.studies.rejoin import cells, options, report
from encbench.studies.rejoin.records import RejoinRecord
from encbench.studies.rejoin.study import RejoinStudy


def root(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


STUDY = StudyDefinition(
    name=RejoinRecord.STUDY,
    words="rejoin",
    setup_words="the replication study's two clusters; node 2 stopped and rejoined",
    variants=pairs.VARIANT_WORDS,
    record=RejoinRecord,
    make=RejoinStudy,
    settings=Settings(
        key=options.SECTION,
        model=options.RejoinSpec,
        rule=options.rejoin_options,
        cells=cells.cells,
        validate=no_calibration(RejoinRecord.STUDY),
    ),
    here=Here(
        disk_bytes=pairs.disk_bytes,
        memory_mb=pairs.memory_mb,
        tools=pairs.needs,
        root=root,
        creates=pairs.CREATES,
    ),
    report=report.PART,
)
