"""The state-transfer study's part of the report: its summary from the results directory,
its sections, and what `compare` and the calibration read of it."""

from __future__ import annotations

from typing import Any

from encbench.report.parts import (
    Calibrated,
    Compared,
    Context,
    ReportPart,
    Setup,
    measured,
    summary_builder,
)
from encbench.studies.state_transfer import section, summary
from encbench.studies.state_transfer.models import StateTransferSummary
from encbench.studies.state_transfer.records import SstCell, SstRecord

NAME = SstRecord.STUDY


build = summary_builder(SstRecord, summary.build)


def compared(part: StateTransferSummary) -> list[Compared]:
    """Matched by (method, cipher, backup threads, AES-NI)."""
    return [
        Compared.of(
            c,
            key=(NAME, c.method, c.cipher, c.backup_threads, c.aesni),
            group="state transfer",
            row_header="transfer",
            label=c.label,
            threads=c.backup_threads,
        )
        for c in measured(part.cells)
    ]


def compare_setup(part: StateTransferSummary) -> dict[str, str]:
    out: dict[str, str] = {}
    if part.mariadb_version:
        out["MariaDB"] = part.mariadb_version
    if part.galera_version:
        out["Galera"] = part.galera_version
    return out


def calibration_label(cell: SstCell) -> tuple[str, str]:
    """An SST cell's method is its group; its encrypted transport is not what a calibration
    ran (both sides plain), so the label names the profile's row, not a cipher."""
    row = f", the {cell.cipher} row" if cell.cipher else ""
    aesni = "" if cell.aesni == "on" else f", AES-NI {cell.aesni}"
    return cell.method, f"{cell.method}, {cell.backup_threads} thr{row}{aesni}"


def sections(part: StateTransferSummary, context: Context) -> list[Any]:
    return section.sections(part)


def setup(part: StateTransferSummary) -> Setup:
    """Only the version of the servers it started (its lines are in its own section)."""
    return Setup(server_version=part.mariadb_version)


PART = ReportPart(
    model=StateTransferSummary,
    build=build,
    setup=setup,
    sections=sections,
    compared=compared,
    compare_metrics={
        "sync_s": "Time to Synced added by encryption",
        "transfer_s": "Donor's stream time added by encryption",
    },
    compare_setup=compare_setup,
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
