"""The rejoin study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import Compared, Context, ReportPart, measured, summary_builder
from encbench.studies.rejoin import section, summary
from encbench.studies.rejoin.models import RejoinSummary
from encbench.studies.rejoin.records import RejoinRecord

build = summary_builder(RejoinRecord, summary.build)


def compared(part: RejoinSummary) -> list[Compared]:
    """Matched by (transfer, missed transactions)."""
    return [
        Compared.of(
            c,
            key=(RejoinRecord.STUDY, c.transfer, c.missed),
            group="rejoin",
            row_header="rejoin",
            label=c.label,
            threads=0,
        )
        for c in measured(part.cells)
    ]


def sections(part: RejoinSummary, context: Context) -> list[Any]:
    return section.sections(part)


PART = ReportPart(
    model=RejoinSummary,
    build=build,
    sections=sections,
    compared=compared,
    compare_metrics={"sync_s": "Time to Synced added by Galera's TLS"},
)
