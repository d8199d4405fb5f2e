"""The PostgreSQL at-rest study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.questions import AT_REST_KEY, AT_REST_TABLE
from encbench.report import pgbench_part
from encbench.report.parts import (
    Across,
    ReportPart,
    Setup,
    summary_builder,
)
from encbench.report.study_parts import compared_cells, sections_with_floor
from encbench.servers.variants import FILESYSTEM_WORDS
from encbench.studies.at_rest.postgresql import section, summary
from encbench.studies.at_rest.postgresql.models import PgAtRestSummary
from encbench.studies.at_rest.postgresql.options import is_oltp
from encbench.studies.at_rest.postgresql.records import PgAtRestRecord

NAME = PgAtRestRecord.STUDY


build = summary_builder(PgAtRestRecord, summary.build)


# Matched by (regime, workload, clients).
compared = compared_cells(
    NAME,
    lambda c: c.key,
    group=lambda c: f"PostgreSQL at rest: {c.regime}",
    row_header="workload",
    threads=lambda c: c.clients,
    label=lambda c: f"{section.WORKLOADS.get(c.workload, c.workload)}, {c.clients} cl",
)


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


PART = ReportPart(
    model=PgAtRestSummary,
    build=build,
    sections=sections_with_floor(section.sections),
    compared=compared,
    compare_metrics={"tps": "PostgreSQL transactions per second lost to fscrypt"},
    compare_setup=pgbench_part.compare_setup,
    setup=setup,
    across=across,
)
