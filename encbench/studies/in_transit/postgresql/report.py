"""The PostgreSQL in-transit study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.report import pgbench_part
from encbench.report.parts import ReportPart, summary_builder
from encbench.report.study_parts import compared_cells, sections_with_floor
from encbench.studies.in_transit.postgresql import section, summary
from encbench.studies.in_transit.postgresql.models import PgInTransitSummary
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

NAME = PgTransitRecord.STUDY


build = summary_builder(PgTransitRecord, summary.build)


# Matched by (test, sslmode, key type, TLS version, clients, round-trip time).
compared = compared_cells(
    NAME,
    lambda c: c.key,
    group=lambda c: f"PostgreSQL in transit: {section.TEST_TITLES.get(c.test, c.test)}",
    row_header="TLS side",
    threads=lambda c: c.clients,
    label=lambda c: (
        f"{section.path_name(c)}{f', RTT {c.rtt_ms:g} ms' if c.rtt_ms else ''}, {c.clients} cl"
    ),
)


PART = ReportPart(
    model=PgInTransitSummary,
    build=build,
    sections=sections_with_floor(section.sections),
    compared=compared,
    compare_metrics={"tps": "PostgreSQL transactions per second lost to TLS"},
    compare_setup=pgbench_part.compare_setup,
    setup=pgbench_part.server_setup,
)
