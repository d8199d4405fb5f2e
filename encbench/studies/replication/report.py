"""The replication study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.report.parts import summary_builder
from encbench.report.study_parts import compared_cells, galera_part, sections_with_floor
from encbench.studies.replication import section, summary
from encbench.studies.replication.models import ReplicationSummary
from encbench.studies.replication.records import ReplicationRecord

PART = galera_part(
    model=ReplicationSummary,
    build=summary_builder(ReplicationRecord, summary.build),
    sections=sections_with_floor(section.sections),
    # Matched by (workload, threads).
    compared=compared_cells(
        ReplicationRecord.STUDY,
        lambda c: (c.workload, c.threads),
        row_header="workload",
    ),
    compare_metrics={"tps": "Throughput lost to Galera's TLS (TPS)"},
)
