"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster
(the clusters, which the rejoin study measures on too: galera_pair_studies.py)."""

from encbench import galera_pair_studies as pairs
from encbench.profile import Profile, no_calibration
from encbench.studies.definition import Here, RootNeed, Settings, StudyDefinition
from encbench.studies.replication import cells, options, report
from encbench.studies.replication.records import ReplicationRecord
from encbench.studies.replication.study import ReplicationStudy


def root(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


STUDY = StudyDefinition(
    name=ReplicationRecord.STUDY,
    words="replication",
    setup_words="two 2-node Galera clusters (plain, socket.ssl), each node on its own host",
    variants=pairs.VARIANT_WORDS,
    record=ReplicationRecord,
    make=ReplicationStudy,
    settings=Settings(
        key=options.SECTION,
        model=options.ReplicationSpec,
        rule=options.replication_options,
        cells=cells.cells,
        validate=no_calibration(ReplicationRecord.STUDY),
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
