"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster
(the clusters, which the rejoin study measures on too: engine/galera_pair_study.py)."""

from encbench.engine import galera_pair_study as pairs
from encbench.studies.definition import StudyDefinition
from encbench.studies.replication import cells, options, report
from encbench.studies.replication.records import ReplicationRecord
from encbench.studies.replication.study import ReplicationStudy

STUDY = StudyDefinition(
    words="replication",
    setup_words="two 2-node Galera clusters (plain, socket.ssl), each node on its own host",
    variants=pairs.VARIANT_WORDS,
    record=ReplicationRecord,
    make=ReplicationStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=pairs.HERE,
    report=report.PART,
)
