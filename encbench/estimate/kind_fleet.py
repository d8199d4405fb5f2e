"""The instances of a kind with its own part (estimate/kinds.py) in `encbench estimate
--prometheus`: the causes as the kind counts them, from its exporter's series, reduced in
Prometheus per instance as prometheus.py reduces the first kind's (mean, quietest, busiest
and 95th percentile step window), estimated with the kind's units and shown in the same
fleet table.  A kind's queries are named with its name before prometheus.py's names."""

from __future__ import annotations

import math
from collections.abc import Mapping

from encbench.estimate import kind_target, kinds, model, prometheus
from encbench.estimate.fleet import InstanceEstimate
from encbench.estimate.kinds import KindEstimate
from encbench.estimate.prometheus import Asked, Instance, _d, over_window
from encbench.estimate.prometheus_api import Sample
from encbench.estimate.rescale import Resolved
from encbench.servers.kind import ServerKind


def prefix(kind: ServerKind) -> str:
    """Its queries' names begin with this, among the first kind's."""
    return f"{kind.name}:"


def step_rate(part: KindEstimate, field: str, w: Asked, step: str | None = None) -> str:
    """The field's rate over each step window, one series per instance."""
    return part.step_rate(field, w.matchers, step or _d(w.step_s))


def queries(kind: ServerKind, part: KindEstimate, w: Asked) -> dict[str, str]:
    """Every query of the kind, by its name (its prefix and prometheus.py's names)."""
    since = _d(w.since_s)
    found = {f"mean:{f}": over_window("mean", step_rate(part, f, w), w) for f in part.SERIES}
    for field in part.SERIES:
        for statistic in ("low", "high", "peak"):
            found[f"{statistic}:{field}"] = over_window(statistic, step_rate(part, field, w), w)
    found["windows"] = (
        f"count_over_time(({step_rate(part, part.WINDOWS_FIELD, w)})[{since}:{_d(w.step_s)}])"
    )
    found["unreachable"] = (
        f"max by (instance) (1 - min_over_time({part.UP}{{{w.matchers}}}[{since}]))"
    )
    for name, series in part.VARIABLES.items():
        found[f"variable:{name}"] = (
            f"max by (instance) (last_over_time({series}{{{w.matchers}}}[{since}]))"
        )
    series, labels = part.VERSION
    found["version"] = (
        f"max by (instance, {', '.join(labels)}) "
        f"(last_over_time({series}{{{w.matchers}}}[{since}]))"
    )
    return {prefix(kind) + k: v for k, v in found.items()}


def instances(
    kind: ServerKind, part: KindEstimate, answers: Mapping[str, list[Sample]]
) -> list[Instance]:
    """The kind's instances among the answers (their hosts' CPU from node_exporter's, asked
    by prometheus.py)."""
    mine: dict[str, list[Sample]] = {
        k.removeprefix(prefix(kind)): v for k, v in answers.items() if k.startswith(prefix(kind))
    }
    for key in ("host_busy", "host_cores"):
        mine[key] = list(answers.get(key, []))
    found = prometheus.by_instance(mine, part.version_of)
    return [i for i in found if any(f"mean:{f}" in i.values for f in part.SERIES)]


def cause_rates(part: KindEstimate, i: Instance, statistic: str) -> dict[str, model.Figure | None]:
    """As prometheus.cause_rates, over the kind's fields."""
    found: dict[str, model.Figure | None] = dict.fromkeys(prometheus.CAUSE_FIELD)
    for cause, field in part.CAUSE_FIELD.items():
        value, low, high = (i.values.get(f"{s}:{field}") for s in (statistic, "low", "high"))
        if value is None and statistic != "mean":
            value = i.values.get(f"mean:{field}")
        if value is None or not math.isfinite(value):
            continue
        value = max(value, 0.0)
        if statistic == "peak" or low is None or high is None:
            found[cause] = model.Figure(value=value, low=value, high=value)
        else:
            found[cause] = model.Figure(value=value, low=max(low, 0.0), high=max(high, 0.0))
    return found


def _missing(part: KindEstimate, e: model.Estimate) -> model.Estimate:
    """Each cause without a figure says why: not exported, or not counted by the kind."""
    return kind_target.with_reasons(kind_target.with_reasons(e, part.NOT_IN_SERIES), part.NO_FIGURE)


def on_now(part: KindEstimate, i: Instance) -> dict[str, str]:
    variables = {
        name: value
        for name in part.VARIABLES
        if (value := i.values.get(f"variable:{name}")) is not None
    }
    return part.fleet_on_now(variables)


def instance_estimate(
    kind: ServerKind,
    part: KindEstimate,
    i: Instance,
    asked: Asked,
    units: Mapping[str, Resolved],
    scope: model.Scope,
) -> InstanceEstimate:
    mine = kinds.used_units(part, units)
    causes = kinds.causes(part)
    mean = model.estimate_at(
        cause_rates(part, i, "mean"), asked.since_s, mine, scope, i.host_busy, kind_causes=causes
    )
    peak = model.estimate_at(
        cause_rates(part, i, "peak"), asked.step_s, mine, scope, None, kind_causes=causes
    )
    notes = prometheus.gaps(i, asked, up=part.UP)
    if all((i.values.get(f"mean:{f}") or 0.0) <= 0 for f in part.SERIES):
        notes.append("no traffic in the window: its counters did not move, nothing to pay")
    return InstanceEstimate(
        instance=i.name,
        server=i.version or kind.title,
        host_cores=i.host_cores,
        host_busy_cores=i.host_busy,
        mean=_missing(part, mean),
        peak=_missing(part, peak),
        on_now=on_now(part, i),
        notes=notes,
    )


def all_queries(w: Asked) -> dict[str, str]:
    """Every query of every kind with its own part."""
    found: dict[str, str] = {}
    for kind, part in kinds.parted():
        found |= queries(kind, part, w)
    return found


def is_theirs(name: str) -> bool:
    """A query's name is one of a kind with its own part."""
    return any(name.startswith(prefix(kind)) for kind, _ in kinds.parted())


def estimates(
    answers: Mapping[str, list[Sample]],
    asked: Asked,
    units: Mapping[str, Resolved],
    scope: model.Scope,
) -> list[tuple[str, InstanceEstimate]]:
    """Every instance of every kind with its own part, under its kind's name."""
    return [
        (kind.name, instance_estimate(kind, part, i, asked, units, scope))
        for kind, part in kinds.parted()
        for i in instances(kind, part, answers)
    ]
