"""The operations study's part of the report: its summary from the results directory, its
sections, and what `compare` reads of it."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.report.cells import cores_of
from encbench.report.models import Record
from encbench.report.parts import ReportPart
from encbench.report.study_parts import compared_cells, sections_of, server_version
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


PART = ReportPart(
    model=OperationsSummary,
    build=build,
    setup=server_version,
    sections=sections_of(section.sections),
    # Matched by (operation, encryption threads).
    compared=compared_cells(
        NAME,
        lambda o: (o.operation, o.threads),
        row_header="operation",
    ),
    compare_metrics={
        "time": "Time added by encryption (seconds of the operation; for encrypting existing "
        "data, ms per transaction of the foreground load)"
    },
    compare_setup=compare_setup,
)
