"""The operations study: what encryption at rest costs a DBA outside steady load — start-up,
crash recovery, encrypting existing data, backup and prepare — each timed, paired plain
against encrypted in the engine's rounds."""

from encbench.engine.machine_needs import Here
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.studies.definition import StudyDefinition
from encbench.studies.operations import cells, options, report, servers
from encbench.studies.operations.records import OperationRecord
from encbench.studies.operations.study import OperationsStudy


def needs(profile: Profile) -> list[Check]:
    """Key rotation builds encbench's key plugin at run time: a C compiler and MariaDB's
    server headers (servers/mariadb/keyplugin)."""
    if "key-rotation" not in options.operations_options(profile).operations:
        return []
    from encbench.servers.mariadb import keyplugin

    name = f"key rotation: the build of {keyplugin.NAME}"
    why = keyplugin.problem()
    if why is None:
        return [Check(name, True, "a C compiler and MariaDB's server headers")]
    detail, _, fix = why.partition(": ")
    return [Check(name, False, detail, fix)]


STUDY = StudyDefinition(
    words="operations under",
    setup_words="a plain and an encrypted sandboxed server, restarted, crashed and backed up",
    variants=("plain server", "encrypted server"),
    record=OperationRecord,
    make=OperationsStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    here=Here(
        disk_bytes=servers.estimated_disk_bytes,
        memory_mb=servers.memory_mb,
        tools=needs,
        creates=(
            "2 MariaDB sandboxes (plain, encrypted; servers, data directories and backups "
            "under the results directory)"
        ),
    ),
    report=report.PART,
)
