"""The fleet's estimated extra CPU over the window, step by step, for the HTML page's time
series: one range query (/api/v1/query_range) whose PromQL does the arithmetic in
Prometheus, so that a thousand instances come back as three series, never as their samples.

At each step, per cause in scope: the rate over the step window of every instance's counter
(`max by (instance)`, as the estimate's queries, then summed over the fleet) × the cause's
unit cost; added over the causes.  The same units serve every instance (the fleet's units
are this machine's), so the fleet's sum of rate × unit is the unit × the sum of rates.
Three series, label `bound`: the estimate and the unit interval's two ends (the fleet at
that moment: no quietest or busiest window of its own).  The instances of a kind with its
own part (estimate/kinds.py) add their rates from its exporter's series × its units, by the
causes it counts there (kind_fleet.py's series).

Past MAX_POINTS steps the series is taken in coarser steps, each a whole number of --step
windows with its rate over the coarser window: a mean over it, with no window left out."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from encbench.estimate import model
from encbench.estimate.kinds import KindEstimate, first, parted
from encbench.estimate.kinds import causes as kind_causes
from encbench.estimate.prometheus import CAUSE_FIELD, MIB_FIELDS, Asked
from encbench.estimate.prometheus_api import Prometheus
from encbench.estimate.rescale import Resolved
from encbench.estimate.units import MIB

# A week of 5 min steps is 2,016 points: drawn whole; more would be more points than a
# plot's width in pixels shows.
MAX_POINTS = 2500
BOUNDS = ("estimate", "low", "high")


@dataclass(frozen=True)
class FleetSeries:
    """The fleet's extra cores at each step (Unix s), with the unit interval's ends."""

    step_s: float  # the resolution drawn: --step, or a whole multiple of it
    times: list[float]
    cores: list[float]
    low: list[float]
    high: list[float]


def resolution_s(asked: Asked) -> float:
    """--step, or the smallest whole multiple of it that keeps the window in MAX_POINTS."""
    return asked.step_s * max(1, math.ceil(asked.since_s / asked.step_s / MAX_POINTS))


def _d(seconds: float) -> str:
    return f"{round(seconds * 1000)}ms" if seconds < 1 else f"{round(seconds)}s"


def _fleet_rate(field: str, matchers: str, window_s: float) -> str:
    """The field's rate summed over the fleet.  A counter every server has leaves a step
    where no exporter reported empty (a gap in the plot, not a zero); one some servers lack
    (the binary log's) is 0 there, so that it does not empty the sum."""
    kind = first()
    window = _d(window_s)
    parts = [f"rate({kind.STATUS}{name}{{{matchers}}}[{window}])" for name in kind.SERIES[field]]
    summed = f"sum(max by (instance) ({' + '.join(parts)}))"
    return summed if field in kind.SERIES_REQUIRED else f"({summed} or vector(0))"


def _kind_fleet_rate(
    part: KindEstimate, field: str, matchers: str, window_s: float, required: bool
) -> str:
    """A kind's exporter's field summed over the fleet (each instance's series added, as
    kind_fleet.py does); beside the first kind's instances 0 where none reported, so that a
    step without that kind's exporters does not empty the fleet's sum."""
    summed = f"sum({part.step_rate(field, matchers, _d(window_s))})"
    return summed if required else f"({summed} or vector(0))"


def _bound(
    units: Mapping[str, Resolved], scope: model.Scope, asked: Asked, kinds: Kinds, end: str
) -> str | None:
    window_s = resolution_s(asked)
    terms = []

    def per(unit_name: str, mib: bool) -> float | None:
        """Cores per unit of rate, at the interval's `end`."""
        unit = units.get(unit_name)
        return None if unit is None else max(getattr(unit, end), 0.0) / 1e6 / (MIB if mib else 1)

    for cause in model.CAUSES if kinds.first else ():
        field = CAUSE_FIELD[cause.key]
        cores = per(cause.unit, field in MIB_FIELDS)
        if cores is not None and scope in cause.scopes:
            terms.append(f"{_fleet_rate(field, asked.matchers, window_s)} * {cores:.9g}")
    for kind, part in parted():
        if kind.name not in kinds.others:
            continue
        for cause in kind_causes(part):
            kind_field = part.CAUSE_FIELD.get(cause.key)  # not all are exported
            cores = per(cause.unit, False)
            if kind_field is not None and cores is not None and scope in cause.scopes:
                rate = _kind_fleet_rate(part, kind_field, asked.matchers, window_s, not kinds.first)
                terms.append(f"{rate} * {cores:.9g}")
    return " + ".join(terms) if terms else None


@dataclass(frozen=True)
class Kinds:
    """Which exporters' instances the fleet has: each kind's series summed only where it has
    instances (a required series of a kind the fleet lacks would empty every step).  `first`:
    the first kind's (prometheus.py's series); `others`: the names of the kinds with their
    own part (estimate/kinds.py) that it has."""

    first: bool = True
    others: frozenset[str] = frozenset()


FIRST_ONLY = Kinds()


@dataclass(frozen=True)
class ClassSeries:
    """A class of hosts (--units-from LABEL=VALUE:FILE): its instances' series carry the
    label, and are summed at the class's own units."""

    label: str
    value: str
    units: Mapping[str, Resolved]


def _quoted(value: str) -> str:
    """A label value inside PromQL's double quotes (its escapes are Go's)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _with(asked: Asked, matcher: str) -> Asked:
    matchers = f"{asked.matchers},{matcher}" if asked.matchers else matcher
    return Asked(asked.end, asked.since_s, asked.step_s, matchers)


def _classed(
    units: Mapping[str, Resolved],
    scope: model.Scope,
    asked: Asked,
    kinds: Kinds,
    end: str,
    classes: Sequence[ClassSeries],
) -> str | None:
    """With classes, each class's instances at its units and the rest at `units`: each group
    labelled apart and then summed, so that a group with no sample at a step drops out of
    the sum rather than emptying it (every group empty: a gap)."""
    if not classes:
        return _bound(units, scope, asked, kinds, end)
    label = classes[0].label
    others = _quoted("|".join(re.escape(c.value) for c in classes))
    groups = [(units, _with(asked, f'{label}!~"{others}"'))] + [
        (c.units, _with(asked, f'{label}="{_quoted(c.value)}"')) for c in classes
    ]
    found = []
    for n, (group_units, group_asked) in enumerate(groups):
        expr = _bound(group_units, scope, group_asked, kinds, end)
        if expr is not None:
            found.append(f'label_replace({expr}, "group", "{n}", "", "")')
    return f"sum({' or '.join(found)})" if found else None


def query(
    asked: Asked,
    units: Mapping[str, Resolved],
    scope: model.Scope,
    kinds: Kinds = FIRST_ONLY,
    classes: Sequence[ClassSeries] = (),
) -> str | None:
    """The one PromQL expression of the three series; None where no cause in scope has a
    unit (nothing to draw)."""
    found = []
    for bound, end in zip(BOUNDS, ("us", "low_us", "high_us"), strict=True):
        expr = _classed(units, scope, asked, kinds, end, classes)
        if expr is None:
            return None
        found.append(f'label_replace({expr}, "bound", "{bound}", "", "")')
    return " or ".join(found)


def ask(
    client: Prometheus,
    asked: Asked,
    units: Mapping[str, Resolved],
    scope: model.Scope,
    kinds: Kinds = FIRST_ONLY,
    classes: Sequence[ClassSeries] = (),
) -> FleetSeries | None:
    """The fleet's series over the window; None where there is nothing to draw."""
    promql = query(asked, units, scope, kinds, classes)
    if promql is None:
        return None
    step = resolution_s(asked)
    # The first point's window starts where the estimate's window does.
    answer = client.query_range(promql, asked.end - asked.since_s + step, asked.end, step)
    by_bound = {s.labels.get("bound", ""): dict(s.points) for s in answer}
    estimate = by_bound.get("estimate", {})
    if not estimate:
        return None
    times = sorted(estimate)
    low, high = by_bound.get("low", {}), by_bound.get("high", {})
    return FleetSeries(
        step_s=step,
        times=times,
        cores=[estimate[t] for t in times],
        low=[low.get(t, estimate[t]) for t in times],
        high=[high.get(t, estimate[t]) for t in times],
    )
