"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster
(the clusters, which the rejoin study measures on too: galera_pair_studies.py)."""

from encbench.galera_pair_definition import pair_study
from encbench.studies.replication import cells, options, report
from encbench.studies.replication.records import ReplicationRecord
from encbench.studies.replication.study import ReplicationStudy

STUDY = pair_study(
    ReplicationRecord,
    ReplicationStudy,
    words="replication",
    setup_words="two 2-node Galera clusters (plain, socket.ssl), each node on its own host",
    section=(options.SECTION, options.ReplicationSpec, options.replication_options),
    cells=cells.cells,
    report=report.PART,
)
