"""A server kind's part of `encbench estimate`: what differs by kind — how its counters are
read over a window, how it counts each of the model's causes, its exporter's series in
Prometheus, its words — given by the kind's package (`servers/<kind>/estimate.py`) through
its ways (servers/ways.py's KindWays.estimate), and asked here by the kind's name.  The
estimate's arithmetic, reports and rules are the same code for every kind.

The kind's part holds only plain values and functions of them: servers/ stands below
estimate/, so it makes none of the model's objects; kind_target.py, kind_fleet.py and
rules.py make them of what it gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from encbench.estimate import model
from encbench.servers import server_kind, ways
from encbench.servers.kind import ServerKind


@runtime_checkable
class KindEstimate(Protocol):
    """A kind's part of the estimate (a module of the kind's package serves)."""

    # The model's causes as the kind counts them: cause key → the changes to its Cause.
    CAUSES: Mapping[str, Mapping[str, Any]]
    UNITS: frozenset[str]  # the unit costs its estimate takes
    NO_FIGURE: Mapping[str, str]  # cause key → why it has no figure, however read
    LEAVES_OUT: tuple[str, ...]  # what it leaves out beyond every server's first words
    AT_REST_WORDS: str  # the report's words on what its at-rest figures are
    MISSING: list[str]  # the counters a window of it cannot have
    SERVER_CPU: str  # how its server's CPU is read, or why not

    # --target: a window of readings (each an opaque snapshot of its counters).
    def target_name(self, where: str) -> str: ...
    def check(self, spec: Any) -> None: ...
    def reading(self, spec: Any) -> AbstractContextManager[Any]: ...
    def reading_words(self, where: str, user: str, seconds: int, sample_s: float) -> str: ...
    def interval_rates(self, a: Any, b: Any, seconds: float) -> dict[str, float | None]: ...
    def progress_line(self, elapsed_s: float, seconds: float, r: Any) -> str: ...
    def window_variables(self, first: Any) -> dict[str, str]: ...
    def on_now(self, variables: Mapping[str, str]) -> dict[str, str]: ...

    # --prometheus and --rules: its exporter's series.
    SERIES: Mapping[str, tuple[str, ...]]  # a rates' field → its counters, added
    CAUSE_FIELD: Mapping[str, str]  # cause key → the field its rate is; not there: none
    WINDOWS_FIELD: str
    UP: str
    VARIABLES: Mapping[str, str]  # a setting → its series
    VERSION: tuple[str, tuple[str, ...]]  # the version's series and its labels
    EXPORTER: str
    NOT_IN_SERIES: Mapping[str, str]
    RULES_WORDS: str  # what its recording rules are of, in a comment above them

    def step_rate(self, field: str, matchers: str, window: str) -> str: ...
    def version_of(self, labels: Mapping[str, str]) -> str: ...
    def fleet_on_now(self, variables: Mapping[str, float]) -> dict[str, str]: ...


def of(kind: str) -> KindEstimate | None:
    """The kind's part of the estimate; None where the kind reads its counters the first
    kind's way (counters.py, prometheus.py)."""
    found = ways.of(kind).estimate
    if found is None:
        return None
    if not isinstance(found, KindEstimate):
        raise RuntimeError(f"the kind {kind!r}'s ways give no estimate part (a KindEstimate)")
    return found


def parted() -> list[tuple[ServerKind, KindEstimate]]:
    """Every kind with a part of its own, in the registry's order."""
    found = []
    for kind in server_kind.kinds():
        part = of(kind.name)
        if part is not None:
            found.append((kind, part))
    return found


def readable() -> list[str]:
    """The kinds whose counters the estimate reads: the first kind's way, and every kind
    with its own part."""
    return [server_kind.kinds()[0].name, *(k.name for k, _ in parted())]


def causes(part: KindEstimate) -> tuple[model.Cause, ...]:
    """The model's causes as the kind counts them."""
    return tuple(dataclasses.replace(c, **part.CAUSES.get(c.key, {})) for c in model.CAUSES)


def others_units() -> frozenset[str]:
    """The units only kinds with their own part take (the first kind's estimate leaves them
    out of its report)."""
    first = {c.unit for c in model.CAUSES}
    return frozenset(u for _, part in parted() for u in part.UNITS if u not in first)


def used_units(part: KindEstimate, resolved: Mapping[str, Any]) -> dict[str, Any]:
    return {n: u for n, u in resolved.items() if n in part.UNITS}
