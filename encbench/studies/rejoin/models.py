"""The rejoin study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary, GaleraPart
from encbench.report.models import Model, Record, Sample


class RejoinVariant(Model):
    sync_s: Sample
    link_mib: Sample
    node1_cpu_s: Sample
    node2_cpu_s: Sample


class RejoinCellSummary(CellSummary[RejoinVariant]):
    rounds_rejected: int  # always written by this study: required (in its place above)
    transfer: str
    missed: int
    proof: Record | None = None


class RejoinSummary(GaleraPart[RejoinCellSummary]):
    # GaleraPart's fields, and nothing more (a docstring would be the schema's description).
    pass
