"""What a study needs of this machine under a profile, and what it leaves on it (`Here`,
with what it needs root for, `RootNeed`): the one object `doctor`, `plan` and `run` read of
it (studies/definition.py: a StudyDefinition's `here`).  Below the studies, so that a part
two studies share can say it once for both (engine/galera_pair_study.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from encbench.machine.checks import Check
from encbench.profiles.profile import Profile


def _needs_nothing(profile: Profile) -> list[Check]:
    return []


def _nothing_to_check(profile: Profile) -> None:
    return None


def _never(profile: Profile) -> bool:
    return False


def _no_tools() -> list[tuple[Check, str]]:
    return []


def _leaves_nothing_out(profile: Profile) -> dict[str, list[Check]]:
    return {}


def _no_setup_time(profile: Profile) -> float:
    return 0.0


def _no_root(profile: Profile) -> RootNeed | None:
    return None


def _any_results_dir(profile: Profile, out: Path) -> None:
    return None


@dataclass(frozen=True)
class RootNeed:
    """What a study needs root for under a profile, as `encbench profiles` says it: `what`
    (e.g. "network namespaces"), and what a run without root leaves out, with the reason
    (None: such a run is refused)."""

    what: str
    without: str | None = None


@dataclass(frozen=True)
class Here:
    """What the study needs of this machine under a profile, and what it leaves on it: the
    one object `doctor`, `plan` and `run` read (a run refuses to start without what a
    required study needs; an optional one is left out, named with why)."""

    # Required.
    disk_bytes: Callable[[Profile], int]
    # MB its servers hold at once, and what they are and how to need less.
    memory_mb: Callable[[Profile], tuple[int, str]]
    # Optional.
    # The tools, privileges and kernel features it needs (beyond its server kind's).
    tools: Callable[[Profile], list[Check]] = _needs_nothing
    # What the machine must also offer the profile's settings (a TLS suite this OpenSSL
    # lacks, no cells at all): raises BadInput with the fix, before anything starts.
    check: Callable[[Profile], None] = _nothing_to_check
    # Left out, with why, on a machine that cannot run it (root, a tool, disk or memory).
    optional: Callable[[Profile], bool] = _never
    # What it needs root for (None: nothing), as `encbench profiles` says it.
    root: Callable[[Profile], RootNeed | None] = _no_root
    # What it needs of the results directory (`--out`), checked before it is created:
    # raises BadInput with the fix (a server that runs as another user must reach it).
    results_dir: Callable[[Profile, Path], None] = _any_results_dir
    # What a run of it creates on this host, as `plan` says it ("": only its results).
    creates: str = ""
    # About how long it spends outside its cells making and loading its servers (`plan`).
    setup_s: Callable[[Profile], float] = _no_setup_time
    # Tools only some of its profiles use, each with what for: `doctor` lists them.
    optional_tools: Callable[[], list[tuple[Check, str]]] = _no_tools
    # What of it a run leaves out, with why, on a machine that lacks these checks, while the
    # rest is measured (a kind's cells beside its first kind's), each with its checks:
    # `doctor` lists them as optional, the run checks them as it comes to those cells.
    optional_cells: Callable[[Profile], dict[str, list[Check]]] = _leaves_nothing_out
