"""The rejoin study's record of measured runs and the metrics it compares.

rejoin.jsonl, schema REJOIN_SCHEMA:
  1 — first version: one line per rejoin of node 2 (IST or SST) of one variant in one round.
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.schema import TIME_WORDS, Metric, RecordedRun, record

REJOIN_SCHEMA = 1

REJOIN_METRICS = (
    Metric("sync_s", "s", "lower_is_better", primary=True, more_less=TIME_WORDS),
    Metric("link_bytes", "bytes", "lower_is_better"),
)
REJOIN_TRANSFERS = {"ist": "IST", "sst": "SST"}


@record
class RejoinCell:
    """One row of the rejoin table: node 2 rejoins by IST (its data kept) or by a full SST
    (its data directory emptied), after node 1 committed `missed` transactions without it."""

    transfer: str  # ist | sst
    missed: int

    @property
    def label(self) -> str:
        return f"rejoin by {REJOIN_TRANSFERS[self.transfer]}, {self.missed:,} transactions missed"

    @property
    def slug(self) -> str:
        return f"{self.transfer}-m{self.missed}"


@record
class RejoinRecord(RecordedRun):
    """One rejoin of node 2 of one variant's cluster (plain, or socket.ssl) in one round:
    timed from node 2's start to Synced (`sync_s`).  Bytes are node 2's veth counters over
    that time, both directions; CPU node 1's over it and node 2's since its start (its cgroup
    is made at its start).  The per-run proof: node 2's own log says how it got the state
    (`transport`: "IST" when it received only write sets, "SST" when rsync copied the data
    directory first) and how many write sets came by IST (`ist_writesets`)."""

    STUDY: ClassVar[str] = "rejoin"
    SCHEMA: ClassVar[int] = REJOIN_SCHEMA
    CELL: ClassVar[type[Any]] = RejoinCell
    METRICS: ClassVar[tuple[Metric, ...]] = REJOIN_METRICS

    cell: RejoinCell
    # round … wall_s: RecordedRun\'s; then this study\'s own
    sync_s: float
    link_bytes: int
    node1_cpu_s: float
    node2_cpu_s: float
    transport: str
    ist_writesets: int
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.sync_s <= 0:
            raise self.impossible(f"synced in {self.sync_s:.3f} s")

    def timed_window_s(self) -> float:
        return self.sync_s
