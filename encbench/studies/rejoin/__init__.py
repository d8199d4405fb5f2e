"""The rejoin study: node 2 of a 2-node Galera cluster rejoining by IST or by SST, on the
replication study's two clusters (plain, and with Galera's own TLS, socket.ssl_*), whose
every node lives on its own emulated host (galera_pair_studies.py)."""

from encbench.galera_pair_definition import pair_study
from encbench.studies.rejoin import cells, options, report
from encbench.studies.rejoin.records import RejoinRecord
from encbench.studies.rejoin.study import RejoinStudy

STUDY = pair_study(
    RejoinRecord,
    RejoinStudy,
    words="rejoin",
    setup_words="the replication study's two clusters; node 2 stopped and rejoined",
    section=(options.SECTION, options.RejoinSpec, options.rejoin_options),
    cells=cells.cells,
    report=report.PART,
)
