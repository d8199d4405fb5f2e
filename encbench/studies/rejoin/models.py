"""The rejoin study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.cell_summary import CellSummary
from encbench.report.models import Differences, Harness, Model, Record, Sample


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


class RejoinSummary(Model):
    target_halfwidth_pct: float
    harness: Harness
    cells: list[RejoinCellSummary]
    differences: Differences | None = None
