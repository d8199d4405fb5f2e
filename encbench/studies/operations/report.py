"""The operations study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from typing import Any

from encbench.profile import Profile
from encbench.report.cells import cores_of
from encbench.report.models import Record
from encbench.report.parts import Compared, Context, ReportPart, Setup, measured
from encbench.results.store import ResultStore
from encbench.studies.operations import section, summary
from encbench.studies.operations.models import OperationsSummary
from encbench.studies.operations.records import OperationRecord

NAME = OperationRecord.STUDY


def build(store: ResultStore, profile: Profile, environment: Record | None) -> OperationsSummary:
    return summary.build(
        store.runs(OperationRecord),
        profile,
        store.read_json(f"{NAME}.json"),
        store.read_json("crypto.json"),
        cores_of(environment),
    )


def compared(part: OperationsSummary) -> list[Compared]:
    """Matched by (operation, encryption threads)."""
    return [
        Compared.of(
            o,
            key=(NAME, o.operation, o.threads),
            group="operations",
            row_header="operation",
            label=o.label,
            threads=o.threads,
        )
        for o in measured(part.cells)
    ]


def compare_setup(part: OperationsSummary) -> dict[str, str]:
    out: dict[str, str] = {}
    enc, data = part.encryption or {}, part.data or {}
    if enc:
        out["encryption"] = f"{enc.get('algorithm', '?')}, scope {enc.get('scope', '?')}"
    if part.mariadb_version:
        out["MariaDB"] = part.mariadb_version
    if data:
        out["data"] = f"{data['tables']} tables × {data['table_size']:,} rows"
    return out


def sections(part: OperationsSummary, context: Context) -> list[Any]:
    return section.sections(part)


def setup(part: OperationsSummary) -> Setup:
    """Only the version of the servers it started (its lines are in its own section)."""
    return Setup(server_version=part.mariadb_version)


PART = ReportPart(
    model=OperationsSummary,
    build=build,
    setup=setup,
    sections=sections,
    compared=compared,
    compare_metrics={
        "time": "Time added by encryption (seconds of the operation; for encrypting existing "
        "data, ms per transaction of the foreground load)"
    },
    compare_setup=compare_setup,
)
