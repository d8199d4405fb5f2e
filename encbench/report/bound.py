"""What bound a cell: CPU, the disk, the link — or none of them — decided from what its
runs used of the machine (results/schema.py: Usage), by one stated rule.

The rule, per variant, on the medians over the cell's counted runs:
- **CPU** when the machine's busy and stolen CPU reached 90% of its cores, or, in an instance
  shape, the server's own CPU reached 90% of its allowance: a faster core, or more of them,
  would have raised the throughput.
- **disk** when the data device was busy (a request in flight) 90% of the window or more —
  iostat's %util.  On a virtual or SSD device that says its queue never emptied, not that it
  could take no more: the IOPS, queue depth and latency beside it say how hard it was pushed.
- **IOPS cap** (the disk, as an instance's volume limits it) when, in an instance shape with
  an IOPS cap, the server's own reads or its writes per second reached 90% of the cap (it
  holds for each): a throttled server leaves the device itself idle, so %util cannot show it.
- **link** when a shaped link carried 90% of its rate or more.
- **none** otherwise: the run waited — on round trips, locks, a single thread's latency —
  with neither the cores nor the device full.  One sysbench thread usually ends here.
Why a rule stated in figures: a published study's figure that differs from this machine's
is explained by a different bound (its disk against these cores), and that must come from
measurements, not from a guess.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import model_serializer

from encbench.report.models import Model, Pair
from encbench.results.schema import Usage

CPU_FULL = 0.90  # of the cores (or the shape's allowance)
DISK_FULL_PCT = 90.0
LINK_FULL = 0.90  # of the link's rate
IOPS_FULL = 0.90  # of an instance shape's IOPS cap
IOPS_CAP = "IOPS cap"  # the disk's bound where a shape's cap, not the device, was full


class BoundSide(Model):
    """One variant's medians over the cell's runs, and what bound it."""

    kinds: list[str]  # "CPU", "disk", "IOPS cap", "link"; empty: none of them
    cores: float
    cores_busy: float
    server_cores: float | None = None
    server_cores_allowed: float | None = None
    disk_busy_pct: float | None = None
    disk_iops: float | None = None
    disk_queue: float | None = None
    disk_await_ms: float | None = None
    disk_mib_s: float | None = None  # read + written
    server_read_iops: float | None = None
    server_write_iops: float | None = None
    iops_cap: float | None = None
    link_mib_s: float | None = None
    link_capacity_mib_s: float | None = None


class BoundBy(Model):
    """What bound a cell, per variant, and the words for its table row."""

    variants: Pair[BoundSide]
    words: str


class Bounded(Model):
    """A cell summary that says what bound it; written only where its runs recorded usage,
    so a summary of older runs reads as it did."""

    bound: BoundBy | None = None

    @model_serializer(mode="wrap")
    def _bound_only_if_known(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("bound") is None:
            data.pop("bound", None)
        return data


def cell_bound(rounds: Sequence[Any]) -> BoundBy | None:
    """What bound a cell, from its counted rounds (estimates.Round: runs by variant, each a
    run record with `usage`)."""
    return bound_by(
        [getattr(r.runs["encrypted"], "usage", None) for r in rounds],
        [getattr(r.runs["plain"], "usage", None) for r in rounds],
    )


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def side(runs: Sequence[Usage]) -> BoundSide:
    def med(name: str) -> float | None:
        return _median([getattr(u, name) for u in runs])

    reads, writes = med("disk_read_mib_s"), med("disk_write_mib_s")
    s = BoundSide(
        kinds=[],
        cores=runs[0].cores,
        cores_busy=med("cores_busy") or 0.0,
        server_cores=med("server_cores"),
        server_cores_allowed=runs[0].server_cores_allowed,
        disk_busy_pct=med("disk_busy_pct"),
        disk_iops=med("disk_iops"),
        disk_queue=med("disk_queue"),
        disk_await_ms=med("disk_await_ms"),
        disk_mib_s=None if reads is None or writes is None else reads + writes,
        server_read_iops=med("server_read_iops"),
        server_write_iops=med("server_write_iops"),
        iops_cap=runs[0].iops_cap,
        link_mib_s=med("link_mib_s"),
        link_capacity_mib_s=runs[0].link_capacity_mib_s,
    )
    return s.model_copy(update={"kinds": kinds(s)})


def kinds(s: BoundSide) -> list[str]:
    """The rule above, on one variant's medians."""
    found = []
    shaped = s.server_cores_allowed is not None and s.server_cores is not None
    if s.cores_busy >= CPU_FULL * s.cores or (
        shaped and (s.server_cores or 0.0) >= CPU_FULL * (s.server_cores_allowed or 0.0)
    ):
        found.append("CPU")
    if s.disk_busy_pct is not None and s.disk_busy_pct >= DISK_FULL_PCT:
        found.append("disk")
    if s.iops_cap and _busier_iops(s) >= IOPS_FULL * s.iops_cap:
        found.append(IOPS_CAP)
    if (
        s.link_mib_s is not None
        and s.link_capacity_mib_s
        and s.link_mib_s >= LINK_FULL * s.link_capacity_mib_s
    ):
        found.append("link")
    return found


def _busier_iops(s: BoundSide) -> float:
    """The reads or the writes a second, whichever came nearer the cap (it holds for each)."""
    return max(s.server_read_iops or 0.0, s.server_write_iops or 0.0)


def bound_by(encrypted: Sequence[Usage | None], plain: Sequence[Usage | None]) -> BoundBy | None:
    """What bound a cell, from its counted runs' usage; None when a side has none recorded
    (runs written before encbench recorded it)."""
    enc = [u for u in encrypted if u is not None]
    pln = [u for u in plain if u is not None]
    if not enc or not pln or len(enc) < len(encrypted) or len(pln) < len(plain):
        return None
    sides = Pair(encrypted=side(enc), plain=side(pln))
    return BoundBy(variants=sides, words=words(sides))


def words(sides: Pair[BoundSide]) -> str:
    """What bound the cell, then the figures that say so, encrypted's first:
    "CPU — 1.96 / 1.95 of 2 cores, disk 3% / 2% busy".  Variants bound differently are
    named each: "encrypted CPU, no encryption none — …"."""
    e, p = sides.encrypted, sides.plain
    verdict = _kinds_words(e.kinds)
    if e.kinds != p.kinds:
        verdict = f"encrypted {verdict}, no encryption {_kinds_words(p.kinds)}"
    return f"{verdict} — {_figures(e, p)}"


def _kinds_words(found: list[str]) -> str:
    return " + ".join(found) if found else "none"


def _figures(e: BoundSide, p: BoundSide) -> str:
    def both(fmt: str, name: str) -> str:
        return f"{fmt.format(getattr(e, name))} / {fmt.format(getattr(p, name))}"

    parts = [f"CPU {both('{:.2f}', 'cores_busy')} of {e.cores:g} cores"]
    if e.server_cores_allowed is not None and e.server_cores is not None and p.server_cores:
        parts.append(f"server {both('{:.2f}', 'server_cores')} of {e.server_cores_allowed:g}")
    if e.disk_busy_pct is not None and p.disk_busy_pct is not None:
        parts.append(
            f"disk {both('{:.0f}%', 'disk_busy_pct')} busy, {both('{:,.0f}', 'disk_iops')} IO/s, "
            f"queue {both('{:.1f}', 'disk_queue')}"
        )
    counted = (e.server_read_iops, e.server_write_iops, p.server_read_iops, p.server_write_iops)
    if e.iops_cap and None not in counted:
        parts.append(
            f"IOPS cap {e.iops_cap:,.0f}: the server's reads {both('{:,.0f}', 'server_read_iops')}"
            f", writes {both('{:,.0f}', 'server_write_iops')} a second"
        )
    if e.link_mib_s is not None and p.link_mib_s is not None and e.link_capacity_mib_s:
        parts.append(f"link {both('{:.1f}', 'link_mib_s')} of {e.link_capacity_mib_s:g} MiB/s")
    return ", ".join(parts)
