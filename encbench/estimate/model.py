"""Rates × unit costs → the extra CPU encryption would add, per cause, with an interval.

  extra cores of a cause = its mean rate over the window × its unit cost
  interval               = lowest 10 s rate × the unit's low end
                           … highest 10 s rate × the unit's high end

so the interval holds both what is uncertain in the unit (its 95% interval over the
measured rounds and thread counts) and how the load moved during the window.  A low end
below zero (a unit measured in too few rounds to tell from zero) is taken as zero:
encryption adds work to a server, it never takes any away.  A total's
interval takes its ends per interval of the window (all causes at the same moment), not the
sum of each cause's own ends, which would pair one cause's quietest 10 s with another's
busiest.  As a share of the server's CPU now: against its mean CPU over the window (only
where it was read, over ssh).

Each cause is counted whether or not the server already encrypts it (what encryption costs
at this load); the report says, per cause, what the server already pays.  Scope `tables`
(InnoDB's tables, `innodb_encrypt_tables`) leaves out the redo log and binary log, which
scope `all` adds (`innodb_encrypt_log`, `encrypt_binlog`); TLS is counted either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from encbench.estimate.counters import Rates
from encbench.estimate.rescale import Resolved
from encbench.estimate.units import FIX, MIB, UnitName
from encbench.report.models import Model

Scope = Literal["tables", "all"]
Study = Literal["at rest", "in transit"]
DOMINANT_SHARE = 0.8  # the largest causes that together make this much of the total


def _mib(value: float | None) -> float | None:
    return None if value is None else value / MIB


@dataclass(frozen=True)
class Cause:
    key: str
    label: str
    counted_as: str  # the counter, as the server names it
    unit: UnitName
    rate_unit: str
    study: Study
    scopes: frozenset[str]  # the scopes that encrypt it
    rate: Callable[[Rates], float | None]


BOTH = frozenset({"tables", "all"})
CAUSES: tuple[Cause, ...] = (
    Cause(
        "table_reads", "table reads", "Innodb_pages_read", "page_read", "pages/s",
        "at rest", BOTH, lambda r: r.pages_read,
    ),
    Cause(
        "table_writes", "table writes", "Innodb_pages_written", "page_written", "pages/s",
        "at rest", BOTH, lambda r: r.pages_written,
    ),
    Cause(
        "redo_log", "redo log", "Innodb_os_log_written", "log_mib", "MiB/s",
        "at rest", frozenset({"all"}), lambda r: _mib(r.redo_bytes),
    ),
    Cause(
        "binary_log", "binary log", "Binlog_bytes_written", "log_mib", "MiB/s",
        "at rest", frozenset({"all"}), lambda r: _mib(r.binlog_bytes),
    ),
    Cause(
        "tls_handshakes", "TLS handshakes", "Connections", "handshake", "connections/s",
        "in transit", BOTH, lambda r: r.connections,
    ),
    Cause(
        "tls_bytes", "TLS bytes", "Bytes_sent + Bytes_received", "tls_mib", "MiB/s",
        "in transit", BOTH, lambda r: _mib(r.bytes),
    ),
)  # fmt: skip


class Figure(Model):
    """A value with the ends of its interval."""

    value: float
    low: float
    high: float


def added(figures: Sequence[Figure | None]) -> Figure | None:
    """The figures known added up, value and ends alike (instances' costs are added, their
    intervals' ends with them); None where none is known."""
    known = [f for f in figures if f is not None]
    if not known:
        return None
    return Figure(
        value=sum(f.value for f in known),
        low=sum(f.low for f in known),
        high=sum(f.high for f in known),
    )


class CauseEstimate(Model):
    key: str
    label: str
    counted_as: str
    study: Study
    in_scope: bool
    rate_unit: str
    rate: Figure | None  # mean over the window; its lowest and highest interval
    unit_name: UnitName
    unit_us: Figure | None
    cores: Figure | None
    share_pct: Figure | None  # of the server's CPU over the window
    missing: str = ""  # why there is no figure


class Total(Model):
    label: str
    causes: list[str]  # the causes it adds up (in scope, with a figure)
    cores: Figure | None
    share_pct: Figure | None


class Estimate(Model):
    scope: Scope
    seconds: float
    server_cores: float | None  # its mean CPU over the window, where read
    causes: list[CauseEstimate]
    at_rest: Total
    in_transit: Total
    total: Total
    dominant: list[str]  # the causes that make most of the total, largest first


def _share(cores: Figure | None, server_cores: float | None) -> Figure | None:
    if cores is None or not server_cores:
        return None
    return Figure(
        value=100.0 * cores.value / server_cores,
        low=100.0 * cores.low / server_cores,
        high=100.0 * cores.high / server_cores,
    )


def _mean_server_cores(intervals: Sequence[Rates]) -> float | None:
    if not intervals or any(r.server_cores is None for r in intervals):
        return None
    seconds = sum(r.seconds for r in intervals)
    return sum((r.server_cores or 0.0) * r.seconds for r in intervals) / seconds


def _rate_over(cause: Cause, intervals: Sequence[Rates]) -> Figure | None:
    """A cause's mean rate over the window, with its lowest and highest interval; None where
    the server does not count it."""
    rates = [cause.rate(r) for r in intervals]
    known = [r for r in rates if r is not None]
    if not intervals or len(known) < len(rates):
        return None
    seconds = sum(r.seconds for r in intervals)
    mean = sum(rate * r.seconds for rate, r in zip(known, intervals, strict=True)) / seconds
    return Figure(value=mean, low=min(known), high=max(known))


def cause_at(
    cause: Cause,
    rate: Figure | None,
    unit: Resolved | None,
    scope: Scope,
    server_cores: float | None,
) -> CauseEstimate:
    """One cause's extra CPU at a rate (its value, lowest and highest), from its unit."""
    base = CauseEstimate(
        key=cause.key,
        label=cause.label,
        counted_as=cause.counted_as,
        study=cause.study,
        in_scope=scope in cause.scopes,
        rate_unit=cause.rate_unit,
        rate=None,
        unit_name=cause.unit,
        unit_us=None if unit is None else Figure(value=unit.us, low=unit.low_us, high=unit.high_us),
        cores=None,
        share_pct=None,
    )
    if rate is None:
        return base.model_copy(update={"missing": f"the server does not count {cause.counted_as}"})
    if unit is None:
        return base.model_copy(update={"rate": rate, "missing": f"no unit cost stored: {FIX}"})
    cores = Figure(
        value=max(rate.value * unit.us / 1e6, 0.0),
        low=max(rate.low * unit.low_us / 1e6, 0.0),
        high=max(rate.high * unit.high_us / 1e6, 0.0),
    )
    return base.model_copy(
        update={"rate": rate, "cores": cores, "share_pct": _share(cores, server_cores)}
    )


def _total(
    label: str,
    causes: Sequence[CauseEstimate],
    server_cores: float | None,
    ends: Callable[[Sequence[CauseEstimate]], tuple[float, float]],
) -> Total:
    """The causes in scope added up; `ends` gives the interval of their sum."""
    counted = [c for c in causes if c.in_scope and c.cores is not None]
    if not counted:
        return Total(label=label, causes=[], cores=None, share_pct=None)
    low, high = ends(counted)
    cores = Figure(
        value=sum(c.cores.value for c in counted if c.cores),  # each already ≥ 0
        low=low,
        high=high,
    )
    return Total(
        label=label,
        causes=[c.key for c in counted],
        cores=cores,
        share_pct=_share(cores, server_cores),
    )


def _same_moment(
    intervals: Sequence[Rates], units: Mapping[str, Resolved], causes: Sequence[Cause] = CAUSES
) -> Callable[[Sequence[CauseEstimate]], tuple[float, float]]:
    """A total's ends with all its causes at the same moment: each interval in turn."""
    by_key = {c.key: c for c in causes}

    def ends(counted: Sequence[CauseEstimate]) -> tuple[float, float]:
        def at(rates: Rates, end: Callable[[Resolved], float]) -> float:
            total = 0.0
            for c in counted:
                value = by_key[c.key].rate(rates)
                total += max((value or 0.0) * end(units[c.unit_name]) / 1e6, 0.0)
            return total

        return (
            min(at(r, lambda u: u.low_us) for r in intervals),
            max(at(r, lambda u: u.high_us) for r in intervals),
        )

    return ends


def each_cause_at_its_ends(counted: Sequence[CauseEstimate]) -> tuple[float, float]:
    """A total's ends where the window's moments are not known (only each cause's lowest
    and highest): every cause at its own lowest, and at its own highest — wider than the
    same moment's, never narrower."""
    return (
        sum(c.cores.low for c in counted if c.cores),
        sum(c.cores.high for c in counted if c.cores),
    )


def dominant(causes: Sequence[CauseEstimate], total: float) -> list[str]:
    """The largest causes that together make DOMINANT_SHARE of the total, largest first."""
    ranked = sorted(
        (c for c in causes if c.in_scope and c.cores is not None and c.cores.value > 0),
        key=lambda c: -(c.cores.value if c.cores else 0.0),
    )
    found: list[str] = []
    reached = 0.0
    for c in ranked:
        if total <= 0 or reached >= DOMINANT_SHARE * total:
            break
        found.append(c.key)
        reached += c.cores.value if c.cores else 0.0
    return found


def estimate(
    intervals: Sequence[Rates],
    units: Mapping[str, Resolved],
    scope: Scope,
    causes: Sequence[Cause] = CAUSES,
) -> Estimate:
    """Every cause's extra CPU at the window's rates, the subtotals at rest and in transit,
    the total over the scope, and the causes that dominate it (`causes`: the server kind's:
    the first kind's, or those estimate/kinds.py's `causes` makes of a kind's own part)."""
    server_cores = _mean_server_cores(intervals)
    rates = {c.key: _rate_over(c, intervals) for c in causes}
    return estimate_at(
        rates,
        sum(r.seconds for r in intervals),
        units,
        scope,
        server_cores,
        _same_moment(intervals, units, causes),
        causes,
    )


def estimate_at(
    rates: Mapping[str, Figure | None],
    seconds: float,
    units: Mapping[str, Resolved],
    scope: Scope,
    server_cores: float | None,
    ends: Callable[[Sequence[CauseEstimate]], tuple[float, float]] = each_cause_at_its_ends,
    kind_causes: Sequence[Cause] = CAUSES,
) -> Estimate:
    """The same from each cause's rate (its value, lowest and highest) by key, where the
    rates come already reduced (from Prometheus: over its step windows)."""
    causes = [
        cause_at(c, rates.get(c.key), units.get(c.unit), scope, server_cores) for c in kind_causes
    ]
    at_rest = _total("at rest", [c for c in causes if c.study == "at rest"], server_cores, ends)
    in_transit = _total(
        "in transit", [c for c in causes if c.study == "in transit"], server_cores, ends
    )
    total = _total("total", causes, server_cores, ends)
    return Estimate(
        scope=scope,
        seconds=seconds,
        server_cores=server_cores,
        causes=causes,
        at_rest=at_rest,
        in_transit=in_transit,
        total=total,
        dominant=dominant(causes, total.cores.value if total.cores else 0.0),
    )
