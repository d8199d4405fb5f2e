"""The state-transfer study's part of the report: its summary from the results directory,
its sections, and what `compare` and the calibration read of it."""

from __future__ import annotations

from encbench.report.parts import Calibrated, summary_builder
from encbench.report.study_parts import compared_cells, galera_part, sections_of
from encbench.studies.state_transfer import section, summary
from encbench.studies.state_transfer.models import StateTransferSummary
from encbench.studies.state_transfer.records import SstCell, SstRecord


def calibration_label(cell: SstCell) -> tuple[str, str]:
    """An SST cell's method is its group; its encrypted transport is not what a calibration
    ran (both sides plain), so the label names the profile's row, not a cipher."""
    row = f", the {cell.cipher} row" if cell.cipher else ""
    aesni = "" if cell.aesni == "on" else f", AES-NI {cell.aesni}"
    return cell.method, f"{cell.method}, {cell.backup_threads} thr{row}{aesni}"


PART = galera_part(
    model=StateTransferSummary,
    build=summary_builder(SstRecord, summary.build),
    sections=sections_of(section.sections),
    # Matched by (method, cipher, backup threads, AES-NI).
    compared=compared_cells(
        SstRecord.STUDY,
        lambda c: (c.method, c.cipher, c.backup_threads, c.aesni),
        group="state transfer",
        row_header="transfer",
        threads=lambda c: c.backup_threads,
    ),
    compare_metrics={
        "sync_s": "Time to Synced added by encryption",
        "transfer_s": "Donor's stream time added by encryption",
    },
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
