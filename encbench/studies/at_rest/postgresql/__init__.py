"""The at-rest study's PostgreSQL cells: two sandboxed PostgreSQL servers, each on its own
loop-mounted ext4 image, one of them encrypted by the filesystem (fscrypt: PostgreSQL has
no encryption at rest of its own), driven by pgbench and by sysbench's pgsql driver, in
memory and io-bound.  Measured apart from MariaDB's (their own runner, records and part of
the report: a KindPart of the study), where `[server] kinds` names PostgreSQL."""

from encbench.studies.at_rest.postgresql import cells, options, report
from encbench.studies.at_rest.postgresql.records import PgAtRestRecord
from encbench.studies.at_rest.postgresql.study import PgAtRestStudy
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.definition import KindPart

PART = KindPart(
    study=RunRecord.STUDY,
    kind=options.KIND,
    words="PostgreSQL at-rest",
    record=PgAtRestRecord,
    make=PgAtRestStudy,
    settings=options.SETTINGS,
    cells_of=cells.cells,
    report=report.PART,
)
