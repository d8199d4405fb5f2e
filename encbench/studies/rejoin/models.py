"""The rejoin study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.cell_summary import GaleraCell, GaleraPart
from encbench.report.models import Model, Sample


class RejoinVariant(Model):
    sync_s: Sample
    link_mib: Sample
    node1_cpu_s: Sample
    node2_cpu_s: Sample


class RejoinCellSummary(GaleraCell[RejoinVariant]):
    transfer: str
    missed: int


class RejoinSummary(GaleraPart[RejoinCellSummary]):
    # GaleraPart's fields, and nothing more (a docstring would be the schema's description).
    pass
