"""A server kind's part of `encbench estimate`: what differs by kind — how its counters are
read over a window, how it counts each of the model's causes, its exporter's series in
Prometheus, its words — given by the kind's package (`servers/<kind>/estimate.py`) through
its ways (servers/ways.py's KindWays.estimate), and asked here by the kind's name.  The
estimate's arithmetic, reports and rules are the same code for every kind.

Two shapes: the first kind's (FirstKind), whose status counters the model's causes are
named by, read over one session (counters.py) and from its exporter's series by instance
(prometheus.py); and every other kind's (KindEstimate), which counts the model's causes its
own way, read one snapshot at a time (kind_target.py) and from its exporter's series summed
per instance (kind_fleet.py).

A kind's part holds only plain values and functions of them: servers/ stands below
estimate/, so it makes none of the model's objects; the modules named make them of what it
gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from encbench.estimate import model
from encbench.estimate.counters import StatusKind
from encbench.servers import server_kind, ways
from encbench.servers.kind import ServerKind


@runtime_checkable
class KindEstimate(Protocol):
    """A kind's part of the estimate.  A module of the kind's package serves it: its
    constants are read-only here (properties), as a module's names are to a Protocol."""

    # The model's causes as the kind counts them: cause key → the changes to its Cause.
    @property
    def CAUSES(self) -> Mapping[str, Mapping[str, Any]]: ...
    # The unit costs its estimate takes.
    @property
    def UNITS(self) -> frozenset[str]: ...
    # Cause key → why it has no figure, however read.
    @property
    def NO_FIGURE(self) -> Mapping[str, str]: ...
    # What it leaves out beyond every server's first words.
    @property
    def LEAVES_OUT(self) -> tuple[str, ...]: ...
    # The report's words on what its at-rest figures are.
    @property
    def AT_REST_WORDS(self) -> str: ...
    # The counters a window of it cannot have.
    @property
    def MISSING(self) -> list[str]: ...
    # How its server's CPU is read, or why not.
    @property
    def SERVER_CPU(self) -> str: ...

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
    # A rates' field → its counters, added.
    @property
    def SERIES(self) -> Mapping[str, tuple[str, ...]]: ...
    # Cause key → the field its rate is; not there: none.
    @property
    def CAUSE_FIELD(self) -> Mapping[str, str]: ...
    @property
    def WINDOWS_FIELD(self) -> str: ...
    @property
    def UP(self) -> str: ...
    # A setting → its series.
    @property
    def VARIABLES(self) -> Mapping[str, str]: ...
    # The version's series and its labels.
    @property
    def VERSION(self) -> tuple[str, tuple[str, ...]]: ...
    @property
    def EXPORTER(self) -> str: ...
    @property
    def NOT_IN_SERIES(self) -> Mapping[str, str]: ...
    # What its recording rules are of, in a comment above them.
    @property
    def RULES_WORDS(self) -> str: ...

    def step_rate(self, field: str, matchers: str, window: str) -> str: ...
    def version_of(self, labels: Mapping[str, str]) -> str: ...
    def fleet_on_now(self, variables: Mapping[str, float]) -> dict[str, str]: ...


@runtime_checkable
class FirstKind(StatusKind, Protocol):
    """The first kind's part (a module of its package serves)."""

    # --target: the window's one session (TargetSpec → a counters.Session with its grants).
    # The setting that names its process's pid file (its CPU over ssh).
    @property
    def PID_FILE(self) -> str: ...
    # The setting that names its cipher at rest, where it has one.
    @property
    def CIPHER(self) -> str: ...

    def session(self, spec: Any) -> AbstractContextManager[Any]: ...
    def server_words(self, variables: Mapping[str, str]) -> str: ...
    # What the server already encrypts of each cause (its settings, the window's Rates).
    def on_now(self, variables: Mapping[str, str], intervals: Sequence[Any]) -> dict[str, str]: ...
    def check_counters(self, status: dict[str, str], grants: Any, user: str) -> None: ...

    # --prometheus and --rules: its exporter's series, one per status counter.
    @property
    def EXPORTER(self) -> str: ...
    # The status counters' series' prefix.
    @property
    def STATUS(self) -> str: ...
    # A rates' field → its counters, added.
    @property
    def SERIES(self) -> Mapping[str, tuple[str, ...]]: ...
    # The fields every server of it has.
    @property
    def SERIES_REQUIRED(self) -> tuple[str, ...]: ...
    @property
    def UPTIME(self) -> str: ...
    @property
    def UP(self) -> str: ...
    # The settings' series' prefix.
    @property
    def VARIABLE_SERIES(self) -> str: ...
    @property
    def EXPORTED_VARIABLES(self) -> tuple[str, ...]: ...
    # The version's series and its labels.
    @property
    def VERSION(self) -> tuple[str, tuple[str, ...]]: ...

    def exported_variables(self, values: Mapping[str, float]) -> dict[str, str]: ...
    def version_of(self, labels: Mapping[str, str]) -> str: ...


def _part(kind: str) -> object | None:
    return ways.of(kind).estimate


def first_kind() -> ServerKind:
    return server_kind.kinds()[0]


def first() -> FirstKind:
    """The first kind's part."""
    found = _part(first_kind().name)
    if not isinstance(found, FirstKind):
        raise RuntimeError(f"the first kind {first_kind().name!r}'s ways give no FirstKind")
    return found


def of(kind: str) -> KindEstimate | None:
    """The kind's part of the estimate; None for the first kind (first()) or a kind the
    estimate does not read."""
    found = None if kind == first_kind().name else _part(kind)
    if found is None:
        return None
    if not isinstance(found, KindEstimate):
        raise RuntimeError(f"the kind {kind!r}'s ways give no estimate part (a KindEstimate)")
    return found


def parted() -> list[tuple[ServerKind, KindEstimate]]:
    """Every kind but the first with a part of its own, in the registry's order."""
    found = []
    for kind in server_kind.kinds():
        part = of(kind.name)
        if part is not None:
            found.append((kind, part))
    return found


def readable() -> list[str]:
    """The kinds whose counters the estimate reads: the first, and every kind with its own
    part."""
    return [first_kind().name, *(k.name for k, _ in parted())]


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
