"""The replication and rejoin studies' parts of the report: their summaries from the
results directory, their sections, and what `compare` reads of them."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import Compared, Context, ReportPart, Setup, measured, summary_builder
from encbench.studies.replication import rejoin_report, section, summary
from encbench.studies.replication.models import RejoinSummary, ReplicationSummary
from encbench.studies.replication.records import RejoinRecord, ReplicationRecord

build = summary_builder(ReplicationRecord, summary.build)


build_rejoin = summary_builder(RejoinRecord, rejoin_report.build)


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


def compared_rejoin(part: RejoinSummary) -> list[Compared]:
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


def compare_setup(part: ReplicationSummary) -> dict[str, str]:
    out: dict[str, str] = {}
    if part.mariadb_version:
        out["MariaDB"] = part.mariadb_version
    if part.galera_version:
        out["Galera"] = part.galera_version
    return out


def sections(part: ReplicationSummary, context: Context) -> list[Any]:
    return section.sections(part, context.noise_floor)


def rejoin_sections(part: RejoinSummary, context: Context) -> list[Any]:
    return rejoin_report.sections(part)


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
REJOIN_PART = ReportPart(
    model=RejoinSummary,
    build=build_rejoin,
    sections=rejoin_sections,
    compared=compared_rejoin,
    compare_metrics={"sync_s": "Time to Synced added by Galera's TLS"},
)
