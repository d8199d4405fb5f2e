"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster;
and the rejoin study on the same clusters: node 2 rejoining by IST or SST."""

from encbench import checks
from encbench.checks import Check
from encbench.profile import Profile
from encbench.studies.definition import RootNeed, StudyDefinition
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
    creates=(
        "2 Galera clusters of 2 MariaDB nodes (servers and data directories under the "
        "results directory), a network namespace per node joined by veth pairs, TLS keys "
        "and certificates"
    ),
    variants=("plain cluster", "socket.ssl cluster"),
    record=ReplicationRecord,
    make=ReplicationStudy,
    section=options.SECTION,
    options_model=options.ReplicationSpec,
    options=options.replication_options,
    cells=cells.cells,
    disk_bytes=sizing.disk_bytes,
    memory_mb=sizing.memory_mb,
    report=report.PART,
    needs=needs,
    validate=options.no_calibration(ReplicationRecord.STUDY),
    root=root,
)
REJOIN = StudyDefinition(
    name=RejoinRecord.STUDY,
    words="rejoin",
    setup_words="the replication study's two clusters; node 2 stopped and rejoined",
    creates=(
        "2 Galera clusters of 2 MariaDB nodes (servers and data directories under the "
        "results directory), a network namespace per node joined by veth pairs, TLS keys "
        "and certificates"
    ),
    variants=("plain cluster", "socket.ssl cluster"),
    record=RejoinRecord,
    make=RejoinStudy,
    section=options.REJOIN_SECTION,
    options_model=options.RejoinSpec,
    options=options.rejoin_options,
    cells=rejoin.cells,
    disk_bytes=sizing.disk_bytes,
    memory_mb=sizing.memory_mb,
    report=report.REJOIN_PART,
    needs=needs,
    validate=options.no_calibration(RejoinRecord.STUDY),
    root=root,
)
