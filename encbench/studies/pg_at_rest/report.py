"""The PostgreSQL at-rest study's part of the report: its summary from the results
directory, its sections, and what `compare` reads of it."""

from __future__ import annotations

from typing import Any

from encbench.profile import Profile
from encbench.report.cells import cores_of
from encbench.report.models import Record
from encbench.report.parts import Compared, Context, ReportPart
from encbench.results.store import ResultStore
from encbench.studies.pg_at_rest import section, summary
from encbench.studies.pg_at_rest.models import PgAtRestSummary
from encbench.studies.pg_at_rest.records import PgAtRestRecord

NAME = PgAtRestRecord.STUDY


def build(store: ResultStore, profile: Profile, environment: Record | None) -> PgAtRestSummary:
    return summary.build(
        store.runs(PgAtRestRecord),
        profile,
        store.read_json(f"{NAME}.json"),
        cores_of(environment),
    )


def compared(part: PgAtRestSummary) -> list[Compared]:
    """Matched by (regime, workload, clients)."""
    return [
        Compared(
            key=(NAME, *c.key),
            group=f"PostgreSQL at rest: {c.regime}",
            row_header="workload",
            label=f"{section.WORKLOADS.get(c.workload, c.workload)}, {c.clients} cl",
            name=c.label,
            threads=c.clients,
            rounds=c.rounds,
            comparisons=c.comparisons,
            bound=c.bound,
        )
        for c in part.cells
        if c.rounds and c.comparisons
    ]


def compare_setup(part: PgAtRestSummary) -> dict[str, str]:
    return {"PostgreSQL": part.postgresql_version} if part.postgresql_version else {}


def sections(part: PgAtRestSummary, context: Context) -> list[Any]:
    return section.sections(part, context.noise_floor)


PART = ReportPart(
    model=PgAtRestSummary,
    build=build,
    sections=sections,
    compared=compared,
    compare_metrics={"tps": "PostgreSQL transactions per second lost to fscrypt"},
    compare_setup=compare_setup,
)
