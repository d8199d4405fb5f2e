"""`encbench estimate --rules`: Prometheus recording rules that compute the estimate
continuously from each kind's exporter's series, with this machine's unit costs written into
them — each rule commented with its unit, where and when that unit was measured.

Per instance and cause, three series (label `bound`): the estimate (rate × the unit) and its
interval's ends (rate × the unit's low and high end), in extra cores; then their sums over
the causes in scope.  The rates are `rate(X[STEP])`, as `--prometheus`'s step windows, so a
dashboard's mean or 95th percentile over a week is `avg_over_time` or
`quantile_over_time(0.95, …)` of the total's series."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Mapping

from encbench.estimate import kinds, model
from encbench.estimate.prometheus import CAUSE_FIELD, MIB_FIELDS
from encbench.estimate.units import MIB, PER, WHAT, Unit

GROUP = "encbench_encryption_estimate"
BOUNDS = ("estimate", "low", "high")


def record_name(cause: str, step: str) -> str:
    return f"instance:encbench_extra_cores_{cause}:rate{step}"


def total_name(step: str) -> str:
    return f"instance:encbench_extra_cores:rate{step}"


def _rate(field: str, step: str, matchers: str) -> str:
    first = kinds.first()
    parts = [f"rate({first.STATUS}{name}{{{matchers}}}[{step}])" for name in first.SERIES[field]]
    return f"max by (instance) ({' + '.join(parts)})"


def _comment(unit: Unit, host: str) -> str:
    low, high = unit.ci_us
    return (
        f"# unit: {WHAT[unit.name]}, {unit.us:.4g} µs ({low:.4g}–{high:.4g}) per "
        f"{PER[unit.name]} ({unit.configuration}; {unit.kind}: {unit.basis}); measured on "
        f"{host} on {unit.measured_on}, from {unit.source}"
    )


def _quoted(text: str) -> str:
    """A YAML scalar that holds PromQL's braces and quotes: JSON's string is YAML's too."""
    return json.dumps(text)


def cause_rules(
    cause: model.Cause,
    words: str,
    unit: Unit | None,
    host: str,
    step: str,
    rate: str,
    per: float = 1.0,
    labels: str = "",
) -> list[str]:
    """One cause's lines: its comment, and a rule per bound (the `rate` × the unit's cost in
    cores, per `per` of the rate's unit: MIB for bytes), or why none is recorded."""
    found = [f"      # {words} (`{cause.counted_as}`)"]
    if unit is None:
        return [*found, f"      # not recorded: no {WHAT[cause.unit]} unit is stored here"]
    found.append("      " + _comment(unit, host))
    low, high = unit.ci_us
    for bound, us in zip(BOUNDS, (unit.us, max(low, 0.0), max(high, 0.0)), strict=True):
        found += [
            f"      - record: {record_name(cause.key, step)}",
            f"        expr: {_quoted(f'{rate} * {us / 1e6 / per:.6g}')}",
            f"        labels: {{bound: {bound}{labels}}}",
        ]
    return found


def kind_lines(
    units: Mapping[str, Unit], step: str, matchers: str, scope: model.Scope, host: str
) -> tuple[list[str], list[str]]:
    """The rules of every kind with its own part (estimate/kinds.py), from its exporter's
    series × its units, recorded under the first kind's names (one series per instance and
    bound, and label kind=NAME, which keeps the kinds' rules apart for promtool), so that
    the total adds every kind: their lines, and the causes in scope they record."""
    found: list[str] = []
    recorded: list[str] = []
    for kind, part in kinds.parted():
        found.append(f"      # {part.RULES_WORDS}")
        for cause in kinds.causes(part):
            field = part.CAUSE_FIELD.get(cause.key)
            if field is None:
                continue  # not exported or not counted by the kind
            unit = units.get(cause.unit)
            rate = f"({part.step_rate(field, matchers, step)})"
            found += cause_rules(
                cause, f"{kind.title} {cause.label}", unit, host, step, rate,
                labels=f", kind: {kind.name}",
            )  # fmt: skip
            if unit is not None and scope in cause.scopes and cause.key not in recorded:
                recorded.append(cause.key)
    return found, recorded


def render(
    units: Mapping[str, Unit],
    step: str,
    matchers: str,
    scope: model.Scope,
    host: str | None = None,
    more: Callable[[str], tuple[list[str], list[str]]] | None = None,
) -> str:
    """The rules file's text (YAML), every rule commented with its unit.  `more(host)`: the
    rules of another kind's causes (their lines and the causes in scope they record,
    kind_lines'), in the same group before the total, which adds them too."""
    host = host or socket.gethostname()
    exporter = kinds.first().EXPORTER
    lines = [
        "# Recording rules from `encbench estimate --rules`: the extra CPU (cores) encryption",
        f"# at rest (scope {scope}) and TLS on every connection would add to each instance, at",
        f"# its rates over {step}, from {exporter}'s series.  The unit costs are those",
        f"# measured on {host}, written in as numbers: another machine's CPU pays another cost.",
        "# Each cause has three series: bound=estimate, and its interval's ends bound=low and",
        "# bound=high (the unit's interval).",
        "groups:",
        f"  - name: {GROUP}",
        "    rules:",
    ]
    recorded = []
    for cause in model.CAUSES:
        field = CAUSE_FIELD[cause.key]
        unit = units.get(cause.unit)
        per = MIB if field in MIB_FIELDS else 1.0
        lines += cause_rules(
            cause, cause.label, unit, host, step, _rate(field, step, matchers), per
        )
        if unit is None:
            continue
        if scope in cause.scopes:
            recorded.append(cause.key)
    if more is not None:
        lines_more, recorded_more = more(host)
        lines += lines_more
        recorded += [k for k in recorded_more if k not in recorded]
    if recorded:
        names = "|".join(recorded)
        expr = (
            f'sum by (instance, bound) ({{__name__=~"instance:encbench_extra_cores_({names})'
            f':rate{step}"}})'
        )
        lines += [
            f"      # The total over scope {scope}: {', '.join(recorded)}.",
            "      # Each end adds its causes' ends at the same moment.",
            f"      - record: {total_name(step)}",
            f"        expr: {_quoted(expr)}",
        ]
    return "\n".join(lines) + "\n"
