"""PostgreSQL at rest: two sandboxed PostgreSQL servers, each on its own loop-mounted ext4
image, one of them encrypted by the filesystem (fscrypt), driven by pgbench in memory and
io-bound."""

from encbench.studies.definition import StudyDefinition
from encbench.studies.pg_at_rest import cells, needs, options, report
from encbench.studies.pg_at_rest.records import PgAtRestRecord
from encbench.studies.pg_at_rest.study import PgAtRestStudy

STUDY = StudyDefinition(
    name=PgAtRestRecord.STUDY,
    words="PostgreSQL at-rest",
    server="postgresql",
    setup_words="two sandboxed PostgreSQL servers, each on its own ext4 image (plain, fscrypt)",
    creates=(
        "2 PostgreSQL sandboxes, each on an ext4 image on a loop device (one with an "
        "fscrypt key), under the results directory; the page cache dropped before each "
        "io-bound run"
    ),
    variants=("plain ext4", "ext4 + fscrypt"),
    record=PgAtRestRecord,
    make=PgAtRestStudy,
    section=options.SECTION,
    options_model=options.PgAtRestSpec,
    options=options.pg_at_rest_options,
    cells=cells.cells,
    disk_bytes=needs.disk_bytes,
    memory_mb=needs.memory_mb,
    report=report.PART,
    needs=needs.needs,
    check=needs.check,
    validate=options.no_calibration,
    optional=needs.optional,
    plan_lines=needs.plan_lines,
    root=needs.root,
    check_out=needs.check_out,
)
