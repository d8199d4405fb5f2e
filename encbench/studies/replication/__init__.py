"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster;
and the rejoin study on the same clusters: node 2 rejoining by IST or SST."""

from encbench import checks
from encbench.checks import Check
from encbench.profile import Profile
from encbench.studies.definition import Here, RootNeed, Settings, StudyDefinition
from encbench.studies.replication import cells, options, rejoin, report, sizing
from encbench.studies.replication.records import RejoinRecord, ReplicationRecord
from encbench.studies.replication.rejoin import RejoinStudy
from encbench.studies.replication.study import ReplicationStudy


def needs(profile: Profile) -> list[Check]:
    """The Galera provider, rsync for node 2's first join, `ip` and root for the hosts."""
    return [
        checks.galera_provider(),
        checks.binary("ip", "iproute2"),
        checks.binary("wsrep_sst_common", "mariadb-server"),
        checks.binary("rsync", "rsync"),
        checks.root("the replication study's clusters live in network namespaces"),
    ]


def root(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


STUDY = StudyDefinition(
    name=ReplicationRecord.STUDY,
    words="replication",
    setup_words="two 2-node Galera clusters (plain, socket.ssl), each node on its own host",
    variants=("plain cluster", "socket.ssl cluster"),
    record=ReplicationRecord,
    make=ReplicationStudy,
    settings=Settings(
        key=options.SECTION,
        model=options.ReplicationSpec,
        rule=options.replication_options,
        cells=cells.cells,
        validate=options.no_calibration(ReplicationRecord.STUDY),
    ),
    here=Here(
        disk_bytes=sizing.disk_bytes,
        memory_mb=sizing.memory_mb,
        tools=needs,
        root=root,
        creates=(
            "2 Galera clusters of 2 MariaDB nodes (servers and data directories under the "
            "results directory), a network namespace per node joined by veth pairs, TLS keys "
            "and certificates"
        ),
    ),
    report=report.PART,
)
REJOIN = StudyDefinition(
    name=RejoinRecord.STUDY,
    words="rejoin",
    setup_words="the replication study's two clusters; node 2 stopped and rejoined",
    variants=("plain cluster", "socket.ssl cluster"),
    record=RejoinRecord,
    make=RejoinStudy,
    settings=Settings(
        key=options.REJOIN_SECTION,
        model=options.RejoinSpec,
        rule=options.rejoin_options,
        cells=rejoin.cells,
        validate=options.no_calibration(RejoinRecord.STUDY),
    ),
    here=Here(
        disk_bytes=sizing.disk_bytes,
        memory_mb=sizing.memory_mb,
        tools=needs,
        root=root,
        creates=(
            "2 Galera clusters of 2 MariaDB nodes (servers and data directories under the "
            "results directory), a network namespace per node joined by veth pairs, TLS keys "
            "and certificates"
        ),
    ),
    report=report.REJOIN_PART,
)
