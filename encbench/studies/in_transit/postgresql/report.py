"""The PostgreSQL in-transit study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import Compared, Context, ReportPart, Setup, measured, summary_builder
from encbench.studies.in_transit.postgresql import section, summary
from encbench.studies.in_transit.postgresql.models import PgInTransitSummary
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

NAME = PgTransitRecord.STUDY


build = summary_builder(PgTransitRecord, summary.build)


def compared(part: PgInTransitSummary) -> list[Compared]:
    """Matched by (test, sslmode, key type, TLS version, clients, round-trip time)."""
    return [
        Compared.of(
            c,
            key=(NAME, *c.key),
            group=f"PostgreSQL in transit: {section.TEST_TITLES.get(c.test, c.test)}",
            row_header="TLS side",
            label=f"{section.path_name(c)}{f', RTT {c.rtt_ms:g} ms' if c.rtt_ms else ''}, "
            f"{c.clients} cl",
            threads=c.clients,
        )
        for c in measured(part.cells)
    ]


def setup(part: PgInTransitSummary) -> Setup:
    """The version of the server it measured (a target's own, not this machine's)."""
    return Setup(server_version=part.postgresql_version)


def compare_setup(part: PgInTransitSummary) -> dict[str, str]:
    return {"PostgreSQL": part.postgresql_version} if part.postgresql_version else {}


def sections(part: PgInTransitSummary, context: Context) -> list[Any]:
    return section.sections(part, context.noise_floor)


PART = ReportPart(
    model=PgInTransitSummary,
    build=build,
    sections=sections,
    compared=compared,
    compare_metrics={"tps": "PostgreSQL transactions per second lost to TLS"},
    compare_setup=compare_setup,
    setup=setup,
)
