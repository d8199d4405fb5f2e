"""The PostgreSQL in-transit study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.report import pgbench_part
from encbench.studies.in_transit.postgresql import section, summary
from encbench.studies.in_transit.postgresql.models import PgInTransitSummary
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

# `compare` matches its cells by (test, sslmode, key type, TLS version, clients, round-trip
# time).
PART = pgbench_part.report_part(
    PgInTransitSummary,
    PgTransitRecord,
    summary.build,
    section.sections,
    lost_to="TLS",
    group=lambda c: f"PostgreSQL in transit: {section.TEST_TITLES.get(c.test, c.test)}",
    row_header="TLS side",
    label=lambda c: (
        f"{section.path_name(c)}{f', RTT {c.rtt_ms:g} ms' if c.rtt_ms else ''}, {c.clients} cl"
    ),
)
