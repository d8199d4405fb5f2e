"""The rejoin study: node 2 of a 2-node Galera cluster rejoining by IST or by SST, on the
replication study's two clusters (plain, and with Galera's own TLS, socket.ssl_*), whose
every node lives on its own emulated host (engine/galera_pair_study.py)."""

from encbench.engine import galera_pair_study as pairs
from encbench.studies.definition import StudyDefinition
from encbench.studies.rejoin import cells, options, report
from encbench.studies.rejoin.records import RejoinRecord
from encbench.studies.rejoin.study import RejoinStudy

STUDY = StudyDefinition(
    words="rejoin",
    setup_words="the replication study's two clusters; node 2 stopped and rejoined",
    variants=pairs.VARIANT_WORDS,
    record=RejoinRecord,
    make=RejoinStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=pairs.HERE,
    report=report.PART,
)
