"""What the rest of encbench knows of a study: one object, `STUDY`, the face of the study's
package (`studies/<name>/__init__.py`), listed once in `studies/__init__.py`.  The engine
builds the study from it; `plan`, `doctor`, the checks before a run, the report, `compare`
and `calibrate` read only these objects, so a new study is its package and one line in
that list."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from encbench.engine.kinds_rule import KindsRule
from encbench.engine.machine_needs import Here
from encbench.engine.progress import RunProgress
from encbench.engine.study import Rule, Study
from encbench.engine.study_base import Given
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.profiles.options import Strict
from encbench.profiles.profile import Profile, registered
from encbench.report.parts import Calibrated, ReportPart
from encbench.results.store import ResultStore
from encbench.servers import ways
from encbench.servers.grants import NOTHING, TargetNeeds
from encbench.servers.mariadb import installs

# What makes a study's runner (engine/study.py's Study; usually its class) of what the engine
# gives it (Given: the results store, the profile, the progress display, and the rule and
# cells the profile asks of it, which `runner` reads).
MakeRunner = Callable[[Given], Study]


def _no_problem(profile: Profile) -> str | None:
    return None


def _no_lines(profile: Profile) -> list[str]:
    return []


def _needs_no_target(profile: Profile) -> TargetNeeds:
    return NOTHING


def _no_databases(results_dir: str) -> list[str]:
    return []


@dataclass(frozen=True)
class Settings:
    """Its section of a profile (`[measure]`, `[transit]` …) and what is read from it: built
    once, in the study's options module, beside the section's model (`options.SETTINGS`)."""

    # Required.
    key: str | None  # the TOML table (None: the study has no section)
    model: type[Strict] | None  # what that table is read as (left out: its defaults)
    rule: Callable[[Profile], Rule]  # rounds, budgets, … under a profile
    # Optional.
    # What its settings cannot be combined with in the rest of the profile (server, data,
    # target, calibration): the one-line problem, or None.  Asked of every profile read,
    # this study listed or not.
    validate: Callable[[Profile], str | None] = _no_problem


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
    # The kinds it measures on a target (empty: every kind of its study).
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class KindCells:
    """A kind that a study measures beside its first by the study's own runner, record type
    and report: what differs is the kind's data — its section of the profile (`settings`),
    its cells (each naming its kind) and how it measures a target of its kind — and its side
    of the runner (`side`).  `name` is what a profile written when these cells were a study
    of their own lists (read as the study with the kind)."""

    study: str  # the study whose cells they are, as a profile's `studies` names it
    kind: str
    name: str
    settings: Settings
    cells_of: Callable[[Profile], Sequence[Any]]  # every cell the profile asks for, in order
    # What the study's runner measures this kind's cells through, made with what the runner
    # gives it (the study says what a side is: in transit, studies/in_transit/side.py).
    side: Callable[[Any], Any]
    # None: it measures only servers of this kind it starts; else how it measures a target.
    target: TargetUse | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.kind,)


@dataclass(frozen=True)
class StudyDefinition:
    """A study, as the rest of encbench sees it.  Every field without a default is required."""

    # Required.
    words: str  # what the report's title calls it ("data-at-rest")
    setup_words: str  # what `plan` says it starts ("two sandboxed servers (plain, encrypted)")
    variants: tuple[str, str]  # what `plan` calls its plain and its encrypted side
    # Its results record (results/schema.py): schema, metrics, and its STUDY, the study's
    # name (`name`).
    record: type[Any]
    make: MakeRunner
    settings: Settings
    # Every cell of its first kind the profile asks for, in order (`cells`: its further
    # kinds' too).
    cells_of: Callable[[Profile], Sequence[Any]]
    here: Here
    report: ReportPart
    # Optional.
    # The kinds of server it can measure (servers/server_kind.py, kinds/): their tools come with it
    # (machine_needs), and a target's DSN must name one of them.  With more than one, the
    # profile's `[server] kinds` chooses which it measures on its sandboxes (kinds_in).  Its
    # further kinds' are added where it leaves them out.
    kinds: tuple[str, ...] = ("mariadb",)
    # None: it measures only servers it starts (it restarts, crashes or clusters them).
    target: TargetUse | None = None
    calibration: Calibrated | None = None  # None: no A/A calibration of it yet
    # The families of server (servers/mariadb/installs.py: "MariaDB", "MySQL") whose private
    # roots its sandboxes run from with `[server] install`; (): always this host's MariaDB.
    install_families: tuple[str, ...] = ()
    # Lines `plan` prints for this profile beyond its cells (a target's read-only checks,
    # the filesystem layer's key set-up).
    plan_lines: Callable[[Profile], list[str]] = _no_lines
    # The kinds whose cells its own runner measures beside its first kind's (KindCells): its
    # own `settings` and `cells_of` are then its first kind's; `cells` and `rule` add theirs.
    other_kinds: tuple[KindCells, ...] = ()

    @property
    def name(self) -> str:
        """As a profile's `studies` names it; also its results file, <name>.jsonl: its
        records' STUDY."""
        return str(self.record.STUDY)

    def __post_init__(self) -> None:
        # A further kind is its one door: its kind becomes a kind of the study where `kinds`
        # leaves it out (after them, in the order of `other_kinds`).
        more = tuple(p.kind for p in self.other_kinds if p.kind not in self.kinds)
        object.__setattr__(self, "kinds", (*self.kinds, *more))

    @property
    def kind_sections(self) -> tuple[KindCells, ...]:
        """Its further kinds' sections of a profile (and the names profiles listed them by)."""
        return self.other_kinds

    def measured(self, profile: Profile) -> list[StudyDefinition | KindCells]:
        """Its kinds the profile measures, each as itself or its further kind's cells: its
        own first (where it measures its first kind, or has no further kinds), then its
        further kinds', in the order they are measured."""
        kinds = self.kinds_in(profile)
        alone = not self.other_kinds
        own: list[StudyDefinition | KindCells] = [self] if alone or self.kinds[0] in kinds else []
        return own + [p for p in self.other_kinds if p.kind in kinds]

    def kinds_cells(self, profile: Profile) -> list[tuple[str, Any]]:
        """Every cell it measures under a profile, each with its kind, in the order its
        runners measure them."""
        return [(m.kinds[0], c) for m in self.measured(profile) for c in m.cells_of(profile)]

    def cells(self, profile: Profile) -> list[Any]:
        """Every cell it measures under a profile (what `plan` lists)."""
        return [c for _, c in self.kinds_cells(profile)]

    def rule(self, profile: Profile) -> Rule:
        """Its rule under a profile: each cell by its own kind's section (KindsRule), the rest
        (what `plan` says of its rounds) by its first measured kind's."""
        first, *others = self.measured(profile) or [self]
        if not others:
            return first.settings.rule(profile)
        return KindsRule(
            first.settings.rule(profile),
            tuple((frozenset(m.cells_of(profile)), m.settings.rule(profile)) for m in others),
        )

    def listed_in(self, profile: Profile) -> str | None:
        """The entry of the profile's `studies` that measures it (None: none does)."""
        return self.name if self.name in profile.studies else None

    def runners(self, store: ResultStore, profile: Profile, progress: RunProgress) -> list[Study]:
        """What the engine runs of it under a profile: its one runner, over every kind it
        measures."""
        return [runner(self, store, profile, progress)] if self.listed_in(profile) else []

    def target_kinds(self, profile: Profile) -> list[str]:
        """The kinds it would measure on a target under a profile: those its TargetUse takes
        (a study that takes none: all its kinds) and its further kinds that take one, of a
        study of several kinds those of `[server] kinds` too."""
        chosen = self.kinds if len(self.kinds) == 1 else profile.server.kinds
        return [k for k in self.target_takes() if k in chosen]

    def target_takes(self) -> list[str]:
        """The kinds it measures on a target under any profile: its TargetUse's (one that
        names none: all its kinds), then those of its further kinds that take a target."""
        own = (self.target.kinds if self.target is not None else ()) or self.kinds
        more = [p.kind for p in self.kind_sections if p.target is not None]
        return [*own, *(k for k in more if k not in own)]

    def target_use(self, profile: Profile) -> TargetUse | None:
        """How it measures the profile's target: as its further kind of the target's kind
        does, where that kind takes one; else as its own TargetUse says."""
        kind = profile.target.kind if profile.target is not None else None
        found = [p.target for p in self.kind_sections if p.kind == kind and p.target is not None]
        return found[0] if found else self.target

    def kinds_in(self, profile: Profile) -> list[str]:
        """The kinds it measures under a profile: the target's (none where it cannot measure
        that kind), else those of `[server] kinds` it can measure; a study of one kind
        measures that one."""
        if profile.target is not None:
            kind = profile.target.kind
            return [kind] if kind in self.target_kinds(profile) else []
        if len(self.kinds) == 1:
            return list(self.kinds)
        return [k for k in profile.server.kinds if k in self.kinds]

    def machine_needs(self, profile: Profile) -> list[Check]:
        """What it needs of this machine: the tools of the kinds it measures (MariaDB's: the
        server, sysbench, the key plugin; PostgreSQL's are in its studies' own `needs`), then
        its own."""
        found = [c for k in self.kinds_in(profile) for c in ways.of(k).tools()]
        found += self.here.tools(profile)
        if self.install_families and profile.server.install != installs.SYSTEM:
            found.append(checks.private_root(profile.server.install))
        return checks.unique(found)


def runner(
    study: StudyDefinition, store: ResultStore, profile: Profile, progress: RunProgress
) -> Study:
    """A study's runner under a profile, made with the rule and the cells (of every kind it
    measures) its definition reads of the profile: the same reading `plan` shows."""
    return study.make(Given(store, profile, progress, study.rule(profile), study.cells(profile)))


def measures(profile: Profile, study: str, kind: str) -> bool:
    """Whether the profile lists the study named `study` and it measures that kind of server
    (its definition's kinds_in): for the study's own modules, which cannot read their
    package's STUDY (it is built of them), so they ask the definition the profile's studies
    were registered with."""
    return study in profile.studies and kind in registered(study).kinds_in(profile)


def _definition(study: str) -> StudyDefinition:
    found = registered(study)
    assert isinstance(found, StudyDefinition), f"{study} is registered by its definition"
    return found


def rule_of(profile: Profile, study: str) -> Rule:
    """The rule under a profile of the study named `study` (its definition's `rule`): for
    the study's own modules, which cannot read their package's STUDY."""
    return _definition(study).rule(profile)


def cells_of(profile: Profile, study: str) -> list[Any]:
    """Every cell of the study named `study` under a profile, of every kind it measures."""
    return _definition(study).cells(profile)


def further_kind(study: str, kind: str) -> KindCells:
    """The further kind of that name of the study named `study` (its `other_kinds`)."""
    found = [o for o in _definition(study).other_kinds if o.kind == kind]
    if not found:
        raise KeyError(f"the {study} study measures no kind {kind!r} beside its first")
    return found[0]


T = TypeVar("T")


def each_kind(
    profile: Profile, study: str, answers: Mapping[str, Callable[[Profile], T]]
) -> list[T]:
    """What each kind of the study that the profile measures answers (`answers`: a kind →
    its own function), in the order of `answers`: what a study of several kinds adds up
    of its kinds' needs (their disk, memory, set-up)."""
    return [answer(profile) for kind, answer in answers.items() if measures(profile, study, kind)]


Number = TypeVar("Number", int, float)


def kinds_added(
    study: str, answers: Mapping[str, Callable[[Profile], Number]]
) -> Callable[[Profile], Number]:
    """A need of a study of several kinds that grows with each kind the profile measures
    (its disk, its set-up time): the kinds' own, added up."""
    return lambda profile: sum(each_kind(profile, study, answers))


def kinds_largest(
    study: str, answers: Mapping[str, Callable[[Profile], tuple[int, str]]]
) -> Callable[[Profile], tuple[int, str]]:
    """The memory of a study of several kinds (MB and what it is for): the largest kind's,
    since one kind's servers stop before the next one's start."""
    return lambda profile: max(each_kind(profile, study, answers), default=(0, "no servers"))
