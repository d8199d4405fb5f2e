"""What the rest of encbench knows of a study: one object, `STUDY`, the face of the study's
package (`studies/<name>/__init__.py`), listed once in `studies/__init__.py`.  The engine
builds the study from it; `plan`, `doctor`, the checks before a run, the report, `compare`
and `calibrate` read only these objects, so a new study is its package and one line in
that list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from encbench import checks, kind_ways
from encbench.checks import Check
from encbench.engine.progress import RunProgress
from encbench.engine.study import Rule, Study
from encbench.options import Strict
from encbench.profile import Profile
from encbench.report.parts import Calibrated, ReportPart
from encbench.results.store import ResultStore
from encbench.servers import installs
from encbench.servers.grants import NOTHING, TargetNeeds


def _needs_nothing(profile: Profile) -> list[Check]:
    return []


def _nothing_to_check(profile: Profile) -> None:
    return None


def _as_written(raw: dict[str, Any]) -> dict[str, Any]:
    return raw


def _no_problem(profile: Profile) -> str | None:
    return None


def _never(profile: Profile) -> bool:
    return False


def _no_lines(profile: Profile) -> list[str]:
    return []


def _no_tools() -> list[tuple[Check, str]]:
    return []


def _needs_no_target(profile: Profile) -> TargetNeeds:
    return NOTHING


def _no_setup_time(profile: Profile) -> float:
    return 0.0


def _no_databases(results_dir: str) -> list[str]:
    return []


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
class Settings:
    """Its section of a profile (`[measure]`, `[transit]` …) and what is read from it."""

    # Required.
    key: str | None  # the TOML table (None: the study has no section)
    model: type[Strict] | None  # what that table is read as (left out: its defaults)
    rule: Callable[[Profile], Rule]  # rounds, budgets, … under a profile
    cells: Callable[[Profile], Sequence[Any]]  # every cell the profile asks for, in order
    # Optional.
    # What its settings cannot be combined with in the rest of the profile (server, data,
    # target, calibration): the one-line problem, or None.  Asked of every profile read,
    # this study listed or not.
    validate: Callable[[Profile], str | None] = _no_problem
    # A profile's TOML as written before (a study merged into this one: its name and
    # section) read as this study's, before anything else reads it.
    upgrade: Callable[[dict[str, Any]], dict[str, Any]] = _as_written


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


@dataclass(frozen=True)
class TargetUse:
    """How a study measures a server encbench did not start (`--target`)."""

    # Required: what `plan` says it sets up there and compares.
    setup_words: str
    # Optional.
    # What it needs of that server's login and plugins (`plan` prints the fixes; a run
    # refuses without them).
    needs: Callable[[Profile], TargetNeeds] = _needs_no_target
    # The databases a run into this results directory creates there: one of those names
    # that is not this run's is refused before the results directory exists.
    databases: Callable[[str], list[str]] = _no_databases


@dataclass(frozen=True)
class StudyDefinition:
    """A study, as the rest of encbench sees it.  Every field without a default is required."""

    # Required.
    name: str  # as a profile's `studies` names it; also its results file, <name>.jsonl
    words: str  # what the report's title calls it ("data-at-rest")
    setup_words: str  # what `plan` says it starts ("two sandboxed servers (plain, encrypted)")
    variants: tuple[str, str]  # what `plan` calls its plain and its encrypted side
    record: type[Any]  # its results record (results/schema.py): file, schema, metrics
    make: Callable[[ResultStore, Profile, RunProgress], Study]
    settings: Settings
    here: Here
    report: ReportPart
    # Optional.
    # The kinds of server it can measure (server_kind.py, kinds/): their tools come with it
    # (machine_needs), and a target's DSN must name one of them.  With more than one, the
    # profile's `[server] kinds` chooses which it measures on its sandboxes (kinds_in).
    kinds: tuple[str, ...] = ("mariadb",)
    # The record types of its other kinds, where a kind's runs differ from `record`'s (each
    # its own results file, <its STUDY>.jsonl): registered with it, read by its report part.
    kind_records: tuple[type[Any], ...] = ()
    # None: it measures only servers it starts (it restarts, crashes or clusters them).
    target: TargetUse | None = None
    calibration: Calibrated | None = None  # None: no A/A calibration of it yet
    # The families of server (installs.py: "MariaDB", "MySQL") whose private roots its
    # sandboxes run from with `[server] install`; (): always this host's MariaDB.
    install_families: tuple[str, ...] = ()
    # Lines `plan` prints for this profile beyond its cells (a target's read-only checks,
    # the filesystem layer's key set-up).
    plan_lines: Callable[[Profile], list[str]] = _no_lines

    @property
    def records(self) -> tuple[type[Any], ...]:
        """Every record type its runs are written as."""
        return (self.record, *self.kind_records)

    def kinds_in(self, profile: Profile) -> list[str]:
        """The kinds it measures under a profile: the target's (none where it cannot measure
        that kind), else those of `[server] kinds` it can measure; a study of one kind
        measures that one."""
        if profile.target is not None:
            return [profile.target.kind] if profile.target.kind in self.kinds else []
        if len(self.kinds) == 1:
            return list(self.kinds)
        return [k for k in profile.server.kinds if k in self.kinds]

    def machine_needs(self, profile: Profile) -> list[Check]:
        """What it needs of this machine: the tools of the kinds it measures (MariaDB's: the
        server, sysbench, the key plugin; PostgreSQL's are in its studies' own `needs`), then
        its own."""
        found = [c for k in self.kinds_in(profile) for c in kind_ways.of(k).tools()]
        found += self.here.tools(profile)
        if self.install_families and profile.server.install != installs.SYSTEM:
            found.append(checks.private_root(profile.server.install))
        return checks.unique(found)
