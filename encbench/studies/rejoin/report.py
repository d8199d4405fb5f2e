"""The rejoin study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.report.parts import summary_builder
from encbench.report.study_parts import compared_cells, galera_part, sections_of
from encbench.studies.rejoin import section, summary
from encbench.studies.rejoin.models import RejoinSummary
from encbench.studies.rejoin.records import RejoinRecord

PART = galera_part(
    model=RejoinSummary,
    build=summary_builder(RejoinRecord, summary.build),
    sections=sections_of(section.sections),
    # Matched by (transfer, missed transactions).
    compared=compared_cells(
        RejoinRecord.STUDY,
        lambda c: (c.transfer, c.missed),
        row_header="rejoin",
    ),
    compare_metrics={"sync_s": "Time to Synced added by Galera's TLS"},
)
