"""The rejoin study's part of summary.json, as typed models."""

from __future__ import annotations

from encbench.report.bound import Bounded
from encbench.report.models import Differences, Estimate, Harness, Model, Pair, Record, Sample


class RejoinVariant(Model):
    sync_s: Sample
    link_mib: Sample
    node1_cpu_s: Sample
    node2_cpu_s: Sample


class RejoinCellSummary(Bounded):
    transfer: str
    missed: int
    label: str
    rounds: int
    rounds_rejected: int
    measured_s: float
    status: str
    variants: Pair[RejoinVariant] | None = None
    comparisons: dict[str, Estimate] = {}
    other_load_pct_of_core: float | None = None
    proof: Record | None = None


class RejoinSummary(Model):
    target_halfwidth_pct: float
    harness: Harness
    cells: list[RejoinCellSummary]
    differences: Differences | None = None
