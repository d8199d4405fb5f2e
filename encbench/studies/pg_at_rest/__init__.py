"""PostgreSQL at rest: two sandboxed PostgreSQL servers, each on its own loop-mounted ext4
image, one of them encrypted by the filesystem (fscrypt), driven by pgbench in memory and
io-bound."""

from encbench.studies.definition import Here, Settings, StudyDefinition
from encbench.studies.pg_at_rest import cells, needs, options, report
from encbench.studies.pg_at_rest.records import PgAtRestRecord
from encbench.studies.pg_at_rest.study import PgAtRestStudy

STUDY = StudyDefinition(
    name=PgAtRestRecord.STUDY,
    words="PostgreSQL at-rest",
    kinds=("postgresql",),
    setup_words="two sandboxed PostgreSQL servers, each on its own ext4 image (plain, fscrypt)",
    variants=("plain ext4", "ext4 + fscrypt"),
    record=PgAtRestRecord,
    make=PgAtRestStudy,
    settings=Settings(
        key=options.SECTION,
        model=options.PgAtRestSpec,
        rule=options.pg_at_rest_options,
        cells=cells.cells,
        validate=options.problem,
    ),
    here=Here(
        disk_bytes=needs.disk_bytes,
        memory_mb=needs.memory_mb,
        tools=needs.needs,
        check=needs.check,
        optional=needs.optional,
        root=needs.root,
        results_dir=needs.check_out,
        creates=(
            "2 PostgreSQL sandboxes, each on an ext4 image on a loop device (one with an "
            "fscrypt key), under the results directory; the page cache dropped before each "
            "io-bound run"
        ),
        setup_s=needs.setup_s,
    ),
    report=report.PART,
    plan_lines=needs.plan_lines,
)
