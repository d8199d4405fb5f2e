"""`encbench estimate --target DSN` of a kind with its own part (estimate/kinds.py): its
counters read over the window by the kind's reader, one reading every 10 s, each reading's
rates the kind's, × the units it takes, in the same report as the first kind's target.
Nothing is changed on the server."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from encbench.estimate import kinds, model, report
from encbench.estimate.counters import SAMPLE_S, Rates, Window
from encbench.estimate.kinds import KindEstimate
from encbench.estimate.rescale import Resolved
from encbench.profiles.profile import TargetSpec


def interval_rates(part: KindEstimate, a: Any, b: Any, seconds: float) -> Rates:
    return Rates.model_validate(part.interval_rates(a, b, seconds))


def sample_window(
    part: KindEstimate,
    read: Callable[[], Any],
    seconds: float,
    variables: dict[str, str],
    progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Window:
    """`seconds` of readings, one every ~10 s, with a line of progress after each."""
    count = max(1, round(seconds / SAMPLE_S))
    step = seconds / count
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    first = read()
    start = previous_at = clock()
    previous = first
    intervals = []
    for i in range(1, count + 1):
        sleep(max(0.0, start + i * step - clock()))
        now, at = read(), clock()
        intervals.append(interval_rates(part, previous, now, at - previous_at))
        progress(part.progress_line(at - start, seconds, intervals[-1]))
        previous, previous_at = now, at
    return Window(
        started_at=started_at,
        seconds=previous_at - start,
        variables=variables | part.window_variables(first),
        changed={},
        intervals=intervals,
        missing=list(part.MISSING),
        server_cpu=part.SERVER_CPU,
    )


def with_reasons(e: model.Estimate, why: Mapping[str, str]) -> model.Estimate:
    """Each cause the kind gives no figure of says why."""
    causes = [c.model_copy(update={"missing": why[c.key]}) if c.key in why else c for c in e.causes]
    return e.model_copy(update={"causes": causes})


def estimate_of(
    part: KindEstimate, intervals: list[Rates], units: Mapping[str, Resolved], scope: model.Scope
) -> model.Estimate:
    """The model's estimate of the kind's rates, by its causes and the units it takes."""
    e = model.estimate(intervals, kinds.used_units(part, units), scope, kinds.causes(part))
    return with_reasons(e, part.NO_FIGURE)


def build(
    part: KindEstimate,
    target: str,
    version: str,
    window: Window,
    e: model.Estimate,
    units: Mapping[str, Resolved],
) -> report.EstimateReport:
    words = [
        w.replace(" (the cipher alone: a floor)", "") for w in report.in_words(e, window, units)
    ]
    words.append(part.AT_REST_WORDS)
    return report.EstimateReport(
        target=target,
        server=version,
        window=window,
        estimate=e,
        on_now=part.on_now(window.variables),
        units=report.units_used(units),
        words=words,
        leaves_out=[report.LEAVES_OUT[0], *part.LEAVES_OUT],
    )


def estimate(
    part: KindEstimate,
    spec: TargetSpec,
    seconds: int,
    scope: model.Scope,
    resolved: Mapping[str, Resolved],
    log: Callable[[str], None],
) -> report.EstimateReport:
    where = f"{spec.host}:{spec.port}"
    units = kinds.used_units(part, resolved)
    with part.reading(spec) as read:
        variables = read.settings
        log(part.reading_words(where, spec.user, seconds, SAMPLE_S))
        window = sample_window(part, read, seconds, variables, log)
    e = estimate_of(part, window.intervals, units, scope)
    return build(part, part.target_name(where), variables["version"], window, e, units)
