"""A kind's ways, found from its facts (servers/kind.py): what the high parts ask of a
server kind — `doctor`'s tools, and a target's check, plan, ownership and clean-up."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from encbench.machine.checks import Check
from encbench.servers import server_kind


@dataclass(frozen=True)
class TargetWays:
    """What encbench does with a server of this kind that it did not start (`--target`)."""

    # (TargetSpec, TargetNeeds) → None, or BadInput in one line (cannot log in, not ready).
    check: Callable[[Any, Any], None]
    # (TargetSpec, TargetNeeds, key algorithm) → `plan`'s lines, and whether the login worked.
    plan_lines: Callable[[Any, Any, str], tuple[list[str], bool]]
    # (TargetSpec, database names, results directory) → None, or BadInput for a database
    # of those names there that is not that run's (only the catalogue is read).
    ownership: Callable[[Any, list[str], str], None]
    # (TargetSpec) → a function that drops one recorded leftover database (`encbench clean
    # --target`), its owner's marker read again first.
    dropper: Callable[[Any], Callable[[Any], None]]


@dataclass(frozen=True)
class KindWays:
    """A kind's ways: its tools and target's required."""

    # The tools every study of it needs on this machine (`doctor`; a run refuses without).
    tools: Callable[[], list[Check]]
    target: TargetWays
    # Optional: its part of `encbench estimate` (a module of its package, as estimate/kinds.py
    # says); None where the estimate does not read it.
    estimate: object | None = None


def of(kind: str) -> KindWays:
    """The ways of the kind of that name (a name no kind has is a defect: profiles validate
    theirs)."""
    module = importlib.import_module(server_kind.named(kind).ways)
    found = getattr(module, "WAYS", None)
    if not isinstance(found, KindWays):
        raise RuntimeError(f"{module.__name__} has no WAYS (a KindWays) for the kind {kind!r}")
    return found
