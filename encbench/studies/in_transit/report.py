"""The in-transit study's part of the report: its summary from the results directory, its
sections, and what `compare` and the calibration read of it.  A PostgreSQL server's part is
postgresql/report.py's, held in this one's `postgresql`; results written when it was a study
of its own (pg-in-transit) are read as such a part (FORMERLY)."""

from __future__ import annotations

from typing import Any

from encbench.profile import Profile
from encbench.report.models import Record
from encbench.report.parts import (
    Calibrated,
    Compared,
    Context,
    KindMeasured,
    ReportPart,
    Setup,
    measured,
    summary_builder,
)
from encbench.results.store import ResultStore
from encbench.servers import installs
from encbench.studies.in_transit import kind, section, summary
from encbench.studies.in_transit.models import InTransitSummary
from encbench.studies.in_transit.postgresql import report as pg_report
from encbench.studies.in_transit.postgresql.records import PgTransitRecord
from encbench.studies.in_transit.records import TransitCell, TransitRecord

NAME = TransitRecord.STUDY


_mariadb_build = summary_builder(TransitRecord, summary.build)


def build(store: ResultStore, profile: Profile, environment: Record | None) -> InTransitSummary:
    """The part of the kind the profile measures (a PostgreSQL server's: its own, held in
    `postgresql`)."""
    if kind.measured(profile) != "postgresql":
        return _mariadb_build(store, profile, environment)
    pg = pg_report.build(store, profile, environment)
    return InTransitSummary(
        target_halfwidth_pct=pg.target_halfwidth_pct, harness=pg.harness, postgresql=pg
    )


def _as_part(before: Record, now: Record | None) -> Record:
    """A pg-in-transit part of a summary.json written before, as this study's (beside the
    MariaDB part of the same summary, where it had one)."""
    if now is not None:
        return {**now, "postgresql": before}
    return {
        "target_halfwidth_pct": before.get("target_halfwidth_pct"),
        "harness": before.get("harness"),
        "postgresql": before,
    }


# The study's name its parts had in summaries written before it measured PostgreSQL.
FORMERLY = {PgTransitRecord.STUDY: _as_part}


def compared(part: InTransitSummary) -> list[Compared]:
    """Matched by (test, method, key type, cipher, RTT, threads, resumption); a PostgreSQL
    server's as postgresql/report.py matches them."""
    found = pg_report.compared(part.postgresql) if part.postgresql is not None else []
    return found + [
        Compared.of(
            t,
            key=(NAME, *t.key),
            group=f"in transit: {section.TEST_TITLES.get(t.test, t.test)}",
            row_header="path",
            # Unnamed server: the two sides of a comparison may be two servers' TLS.
            label=f"{section.method_name(t, family='')}"
            f"{f', RTT {t.rtt_ms:g} ms' if t.rtt_ms else ''}, {t.threads} thr",
            threads=t.threads,
        )
        for t in measured(part.cells)
    ]


def _family(part: InTransitSummary) -> str | None:
    """The server as its makers name it beyond its kind (MySQL, Percona Server); None:
    MariaDB."""
    return installs.title(part.family)


def compare_setup(part: InTransitSummary) -> dict[str, str]:
    pg = pg_report.compare_setup(part.postgresql) if part.postgresql is not None else {}
    if not part.measured_mariadb:
        return pg
    return {**_mariadb_setup(part), **pg}


def _mariadb_setup(part: InTransitSummary) -> dict[str, str]:
    out = {"TLS": part.tls_version}
    if part.install:
        out["OpenSSL"] = f"{part.install['openssl']} (the {part.install['name']} root's)"
    if part.mariadb_version:
        family = _family(part)
        out["MariaDB"] = f"{family} {part.mariadb_version}" if family else part.mariadb_version
    return out


def setup(part: InTransitSummary) -> Setup:
    """Only the server's version (its lines are in the study's own section): each kind's
    where it measured PostgreSQL."""
    if part.postgresql is None:
        return Setup(server_version=part.mariadb_version, server_title=_family(part))
    pg = KindMeasured("postgresql", part.postgresql.postgresql_version)
    if not part.measured_mariadb:
        return Setup(kinds=[pg])
    return Setup(kinds=[KindMeasured("mariadb", part.mariadb_version, _family(part)), pg])


def calibration_label(cell: TransitCell) -> tuple[str, str]:
    """(group, label) of an in-transit cell: what the row measured, not its encrypted path
    (in a calibration none is taken); a tunnel or key-type row says which profile row it is."""
    group = cell.test + (f", RTT {cell.rtt_ms:g} ms" if cell.rtt_ms else "")
    row = "" if cell.method == "tls" else f", the {cell.method} row"
    return group, f"{group}, {cell.threads} thr{row}"


def sections(part: InTransitSummary, context: Context) -> list[Any]:
    found = section.sections(part, context.noise_floor) if part.measured_mariadb else []
    if part.postgresql is not None:
        found += pg_report.sections(part.postgresql, context)
    return found


PART = ReportPart(
    model=InTransitSummary,
    build=build,
    sections=sections,
    compared=compared,
    compare_metrics={
        "rate": "Rate lost to encryption (connections, transactions or MiB per s)",
        **pg_report.PART.compare_metrics,
    },
    compare_setup=compare_setup,
    setup=setup,
    formerly=FORMERLY,
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
