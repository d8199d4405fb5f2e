"""The replication study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import Compared, Context, ReportPart, Setup, measured, summary_builder
from encbench.studies.replication import section, summary
from encbench.studies.replication.models import ReplicationSummary
from encbench.studies.replication.records import ReplicationRecord

build = summary_builder(ReplicationRecord, summary.build)


def compared(part: ReplicationSummary) -> list[Compared]:
    """Matched by (workload, threads)."""
    return [
        Compared.of(
            c,
            key=(ReplicationRecord.STUDY, c.workload, c.threads),
            group="replication",
            row_header="workload",
            label=c.label,
            threads=c.threads,
        )
        for c in measured(part.cells)
    ]


def compare_setup(part: ReplicationSummary) -> dict[str, str]:
    out: dict[str, str] = {}
    if part.mariadb_version:
        out["MariaDB"] = part.mariadb_version
    if part.galera_version:
        out["Galera"] = part.galera_version
    return out


def sections(part: ReplicationSummary, context: Context) -> list[Any]:
    return section.sections(part, context.noise_floor)


def setup(part: ReplicationSummary) -> Setup:
    """Only the version of the servers it started (its lines are in its own section)."""
    return Setup(server_version=part.mariadb_version)


PART = ReportPart(
    model=ReplicationSummary,
    build=build,
    setup=setup,
    sections=sections,
    compared=compared,
    compare_metrics={"tps": "Throughput lost to Galera's TLS (TPS)"},
    compare_setup=compare_setup,
)
