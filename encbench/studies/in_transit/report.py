"""The in-transit study's part of the report: its summary from the results directory, its
sections, and what `compare` and the calibration read of it."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import (
    Calibrated,
    Context,
    ReportPart,
    Setup,
    summary_builder,
)
from encbench.report.study_parts import compared_cells
from encbench.servers.mariadb import installs
from encbench.studies.in_transit import section, summary
from encbench.studies.in_transit.models import InTransitSummary
from encbench.studies.in_transit.records import TransitCell, TransitRecord

NAME = TransitRecord.STUDY


build = summary_builder(TransitRecord, summary.build)


# Matched by (test, method, key type, cipher, RTT, threads, resumption).
compared = compared_cells(
    NAME,
    lambda t: t.key,
    group=lambda t: f"in transit: {section.TEST_TITLES.get(t.test, t.test)}",
    row_header="path",
    # Unnamed server: the two sides of a comparison may be two servers' TLS.
    label=lambda t: (
        f"{section.method_name(t, family='')}"
        f"{f', RTT {t.rtt_ms:g} ms' if t.rtt_ms else ''}, {t.threads} thr"
    ),
)


def _family(part: InTransitSummary) -> str | None:
    """The server as its makers name it beyond its kind (MySQL, Percona Server); None:
    MariaDB."""
    return installs.title(part.family)


def compare_setup(part: InTransitSummary) -> dict[str, str]:
    out = {"TLS": part.tls_version}
    if part.install:
        out["OpenSSL"] = f"{part.install['openssl']} (the {part.install['name']} root's)"
    if part.mariadb_version:
        family = _family(part)
        out["MariaDB"] = f"{family} {part.mariadb_version}" if family else part.mariadb_version
    return out


def setup(part: InTransitSummary) -> Setup:
    """Only the server's version (its lines are in the study's own section)."""
    return Setup(server_version=part.mariadb_version, server_title=_family(part))


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
    compare_metrics={"rate": "Rate lost to encryption (connections, transactions or MiB per s)"},
    compare_setup=compare_setup,
    setup=setup,
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
