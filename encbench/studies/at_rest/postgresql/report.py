"""The PostgreSQL at-rest study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.engine.questions import AT_REST_KEY, AT_REST_TABLE
from encbench.report import pgbench_part
from encbench.report.parts import (
    Across,
    Setup,
)
from encbench.servers.variants import FILESYSTEM_WORDS
from encbench.studies.at_rest.postgresql import section, summary
from encbench.studies.at_rest.postgresql.models import PgAtRestSummary
from encbench.studies.at_rest.postgresql.options import is_oltp
from encbench.studies.at_rest.postgresql.records import PgAtRestRecord


def across(part: PgAtRestSummary) -> list[Across]:
    """Its TPS costs beside another server's, for the same workload, regime and clients
    (report/across.py): sysbench's oltp_* cells stand beside MariaDB's."""
    return [
        Across(
            AT_REST_TABLE,
            AT_REST_KEY,
            (c.workload, c.regime, str(c.clients)),
            f"PostgreSQL: {FILESYSTEM_WORDS}",
            c.comparisons["tps"],
        )
        for c in part.cells
        if c.rounds and "tps" in c.comparisons
    ]


def setup(part: PgAtRestSummary) -> Setup:
    """The version of the server it measured, and sysbench where its oltp_* cells ran."""
    oltp = sorted({c.workload for c in part.cells if c.rounds and is_oltp(c.workload)})
    software = (
        [f"{', '.join(oltp)}: sysbench's stock scripts through its PostgreSQL driver (pgsql)."]
        if oltp
        else []
    )
    return Setup(software=software, server_version=part.postgresql_version)


# `compare` matches its cells by (regime, workload, clients).
PART = pgbench_part.report_part(
    PgAtRestSummary,
    PgAtRestRecord,
    summary.build,
    section.sections,
    lost_to="fscrypt",
    group=lambda c: f"PostgreSQL at rest: {c.regime}",
    row_header="workload",
    label=lambda c: f"{section.WORKLOADS.get(c.workload, c.workload)}, {c.clients} cl",
    setup=setup,
    across=across,
)
