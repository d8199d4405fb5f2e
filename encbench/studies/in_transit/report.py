"""The in-transit study's part of the report: its summary from the results directory, its
sections, and what `compare` and the calibration read of it."""

from __future__ import annotations

from typing import Any

from encbench.profiles.profile import Profile
from encbench.report.cells import cores_of
from encbench.report.models import Record
from encbench.report.parts import Calibrated, Context, KindMeasured, ReportPart, Setup
from encbench.report.study_parts import compared_cells
from encbench.results.store import ResultStore
from encbench.servers.mariadb import installs
from encbench.studies.in_transit import section, study_record, summary
from encbench.studies.in_transit.kind import MARIADB, POSTGRESQL
from encbench.studies.in_transit.models import InTransitSummary, TransitCellSummary
from encbench.studies.in_transit.records import TransitCell, TransitRecord

NAME = TransitRecord.STUDY


def build(store: ResultStore, profile: Profile, environment: Record | None) -> InTransitSummary:
    """Its runs, its record file with each kind's part (an earlier kind's file read too: a
    results directory whose PostgreSQL runs were a study of their own) and the cores."""
    record = study_record.read(store)
    return summary.build(store.runs(TransitRecord), profile, record, cores_of(environment))


def _compared_label(t: TransitCellSummary) -> str:
    # Unnamed server: the two sides of a comparison may be two servers' TLS.
    far = f", RTT {t.rtt_ms:g} ms" if t.rtt_ms else ""
    return f"{section.method_name(t, family='')}{far}, {t.threads} {section.threads_word(t)}"


# Matched by (test, method, key type, cipher, RTT, threads, resumption, kind, sslmode, TLS
# version).
compared = compared_cells(
    NAME,
    lambda t: t.key,
    group=lambda t: f"in transit: {section.test_title(t)}",
    row_header="path",
    label=_compared_label,
)


def _family(part: InTransitSummary) -> str | None:
    """The server as its makers name it beyond its kind (MySQL, Percona Server); None:
    MariaDB."""
    return installs.title(part.family)


def _measures(part: InTransitSummary, kind: str) -> bool:
    return any(c.kind == kind for c in part.cells)


def compare_setup(part: InTransitSummary) -> dict[str, str]:
    out: dict[str, str] = {}
    if _measures(part, MARIADB):
        out["TLS"] = part.tls_version
    if part.install:
        out["OpenSSL"] = f"{part.install['openssl']} (the {part.install['name']} root's)"
    if part.mariadb_version:
        family = _family(part)
        out["MariaDB"] = f"{family} {part.mariadb_version}" if family else part.mariadb_version
    if part.postgresql is not None and part.postgresql.postgresql_version:
        out["PostgreSQL"] = part.postgresql.postgresql_version
    return out


def setup(part: InTransitSummary) -> Setup:
    """Only each kind's server and version (its lines are in the study's own section)."""
    kinds = list(dict.fromkeys(c.kind for c in part.cells))
    if kinds in ([], [MARIADB]):
        return Setup(server_version=part.mariadb_version, server_title=_family(part))
    versions = {
        MARIADB: (part.mariadb_version, _family(part)),
        POSTGRESQL: (part.postgresql.postgresql_version if part.postgresql else None, None),
    }
    return Setup(kinds=[KindMeasured(k, *versions.get(k, (None, None))) for k in kinds])


def calibration_label(cell: TransitCell) -> tuple[str, str]:
    """(group, label) of an in-transit cell: what the row measured, not its encrypted path
    (in a calibration none is taken); a tunnel or key-type row says which profile row it is."""
    group = cell.test + (f", RTT {cell.rtt_ms:g} ms" if cell.rtt_ms else "")
    row = "" if cell.method == "tls" else f", the {cell.method} row"
    return group, f"{group}, {cell.threads} thr{row}"


def sections(part: InTransitSummary, context: Context) -> list[Any]:
    return section.sections(part, context.noise_floor)


PART = ReportPart(
    model=InTransitSummary,
    build=build,
    sections=sections,
    compared=compared,
    compare_metrics={
        "rate": "Rate lost to encryption (connections, transactions, MiB or copies per s)"
    },
    compare_setup=compare_setup,
    setup=setup,
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
