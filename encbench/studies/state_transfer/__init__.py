"""The state-transfer study: what encrypting a Galera state snapshot transfer (SST) costs —
a full copy of a node's data to a joining node, by mariadb-backup over socat or by rsync,
plain against encrypted (socat's TLS, stunnel) — on a real 2- or 3-node cluster whose nodes
live each on its own emulated host."""

from encbench.engine.machine_needs import Here, RootNeed
from encbench.profiles.profile import Profile
from encbench.studies.definition import StudyDefinition
from encbench.studies.state_transfer import cells, needs, options, report, sizing
from encbench.studies.state_transfer.records import SstRecord
from encbench.studies.state_transfer.study import StateTransferStudy


def root(profile: Profile) -> RootNeed:
    """Its nodes live on network namespaces; an optional study is left out without root."""
    optional = options.state_transfer_options(profile).optional
    return RootNeed("network namespaces", without="the SST" if optional else None)


STUDY = StudyDefinition(
    words="state-transfer",
    setup_words="a Galera cluster of 2 or 3 nodes, each on its own emulated host",
    variants=("plain stream", "the cell's encrypted stream"),
    record=SstRecord,
    make=StateTransferStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=Here(
        disk_bytes=sizing.disk_bytes,
        memory_mb=sizing.memory_mb,
        tools=needs.needs,
        check=needs.check,
        optional=lambda profile: options.state_transfer_options(profile).optional,
        root=root,
        creates=(
            "2 or 3 Galera MariaDB nodes (servers and data directories under the results "
            "directory), a network namespace per node joined by veth pairs, TLS keys and "
            "certificates for the encrypted streams"
        ),
    ),
    report=report.PART,
    calibration=report.CALIBRATED,
)
