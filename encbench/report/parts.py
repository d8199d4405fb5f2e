"""What a study gives the report (its ReportPart), and the shapes the shared report code
reads of it.  report/ knows no study by name: documents.py, compare.py and calibration.py
loop over the parts they are given (studies/definition.py: each study's `STUDY.report`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from encbench.profiles.profile import Profile
from encbench.report.bound import BoundBy
from encbench.report.cells import cores_of
from encbench.report.models import Estimate, Model, NoiseFloor, Record
from encbench.report.tables import Section
from encbench.results.store import ResultStore


class _MeasuredCell(Protocol):
    @property
    def rounds(self) -> int: ...
    @property
    def comparisons(self) -> Mapping[str, Estimate]: ...


_Cell = TypeVar("_Cell", bound=_MeasuredCell)


@dataclass(frozen=True)
class Setup:
    """A study's lines in the report's Setup list: before the machine, after the software
    versions, and after the statistics line; and the version of the server it measured,
    for the software line (of its first kind, StudyDefinition.kinds; a study that measured
    other kinds names them in `kinds`)."""

    servers: list[str] = field(default_factory=list)
    software: list[str] = field(default_factory=list)
    last: list[str] = field(default_factory=list)
    server_version: str | None = None
    # The server as its makers name it where that is not its kind's title: a MySQL target is
    # measured by the mariadb kind (one protocol, one DSN scheme), and its report says MySQL.
    server_title: str | None = None
    # The kinds this part measured, each with its server's version and title as above
    # (empty: its study's first kind, with server_version and server_title).
    kinds: list[KindMeasured] = field(default_factory=list)

    def kinds_measured(self, study_kinds: Sequence[str]) -> list[str]:
        """The kinds of server this part measured (a study of several kinds names them)."""
        return [k.kind for k in self.kinds] or list(study_kinds[:1])

    def version_of(self, kind: str, study_kinds: Sequence[str]) -> tuple[str | None, str | None]:
        """The version and the title of the server of that kind this part measured."""
        for k in self.kinds:
            if k.kind == kind:
                return k.version, k.title
        if not self.kinds and list(study_kinds[:1]) == [kind]:
            return self.server_version, self.server_title
        return None, None


@dataclass(frozen=True)
class KindMeasured:
    """One kind of server a study's part measured: its version and its makers' name for it
    (None: the kind's title)."""

    kind: str
    version: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Context:
    """What a study's sections read beyond its own part: this machine's noise floor, by
    which its summary judges a result (report/suspect.py)."""

    noise_floor: NoiseFloor | None = None


@dataclass(frozen=True)
class Compared:
    """One measured cell as `encbench compare` matches it across two result sets: `key`
    identifies it (the cell without its results); the rest places and names it."""

    key: tuple[Any, ...]
    group: str  # the title of the comparison's table it goes in
    row_header: str
    label: str  # its row
    name: str  # in words, for "measured only in"
    threads: int
    rounds: int
    comparisons: Mapping[str, Estimate]
    bound: BoundBy | None = None  # what bound it (report/bound.py)

    @classmethod
    def of(
        cls,
        cell: Any,
        *,
        key: tuple[Any, ...],
        group: str,
        row_header: str,
        label: str,
        threads: int,
        name: str | None = None,
    ) -> Compared:
        """A measured cell of any study: its rounds, comparisons and bound read from it, its
        name its own label unless given."""
        return cls(
            key, group, row_header, label, name or cell.label, threads, cell.rounds,
            cell.comparisons, cell.bound,
        )  # fmt: skip


_Summary = TypeVar("_Summary")


def summary_builder(
    record_type: Any, summarize: Callable[[list[Any], Profile, Record | None, int], _Summary]
) -> Callable[[ResultStore, Profile, Record | None], _Summary]:
    """ReportPart.build for a study whose summary reads what most do: its runs, the profile,
    its own record file (`<study>.json`) and the machine's cores."""

    def build(store: ResultStore, profile: Profile, environment: Record | None) -> _Summary:
        return summarize(
            store.runs(record_type),
            profile,
            store.read_json(f"{record_type.STUDY}.json"),
            cores_of(environment),
        )

    return build


def measured(cells: Iterable[_Cell]) -> list[_Cell]:
    """The cells `compare` can match: measured, with comparisons."""
    return [c for c in cells if c.rounds and c.comparisons]


@dataclass(frozen=True)
class Across:
    """One measured cell as the table across studies places it: cells of different studies
    with the same `table` and `key` (e.g. workload, memory regime, client threads) are one
    row, each study's `column` (its server and how it encrypts) one column, so that one
    question's answer on every server reads in one table."""

    table: str  # its title, which also names the metric
    key_names: tuple[str, ...]  # the header of the key's columns
    key: tuple[str, ...]
    column: str
    estimate: Estimate


def _nothing_across(part: Any) -> list[Across]:
    return []


def _no_setup(part: Any) -> Setup:
    return Setup()


def _nothing_compared(part: Any) -> list[Compared]:
    return []


def _no_lines(part: Any) -> dict[str, str]:
    return {}


def _unknown(part: Any) -> str | None:
    return None


def _no_setup_lines(part: Any) -> list[str]:
    return []


def _no_lead(part: Any) -> list[str]:
    return []


@dataclass(frozen=True)
class ReportPart:
    """A study's part of summary.json (built from its results directory alone) and of
    report.md / report.html (from that part alone)."""

    model: type[Model]  # its part of summary.json, under the study's name
    build: Callable[[ResultStore, Profile, Record | None], Model]  # (store, profile, env)
    sections: Callable[[Any, Context], list[Section]]  # (its part, what else they read)
    setup: Callable[[Any], Setup] = _no_setup
    # What a reader must know before any figure (paragraphs right after the title): what
    # the run could not measure that its figures might be taken for.
    lead: Callable[[Any], list[str]] = _no_lead
    # `encbench compare`: the part's measured cells, and the metrics compared (metric →
    # the title of its table of changes).
    compared: Callable[[Any], list[Compared]] = _nothing_compared
    compare_metrics: Mapping[str, str] = field(default_factory=dict)
    # What `compare`'s set-up table shows of the part (what a reader checks first).
    compare_setup: Callable[[Any], dict[str, str]] = _no_lines
    # The report's tables across studies (report/across.py): the part's measured cells that
    # another study's may stand beside.
    across: Callable[[Any], list[Across]] = _nothing_across
    # The server cipher whose `openssl speed` the crypto section marks, and how the rounds
    # shared the machine (the noise floor holds for runs measured the same way): the first
    # study that knows them says.
    cipher: Callable[[Any], str | None] = _unknown
    sharing: Callable[[Any], str | None] = _unknown


@dataclass(frozen=True)
class Calibrated:
    """What an A/A calibration reads of a study: each cell's group and label in the noise
    floor's tables; its stopping settings and cells come from the study itself."""

    label: Callable[[Any], tuple[str, str]]
    # The calibration's Setup lines for the study (what A and B were, and how each was proven).
    setup: Callable[[Any], list[str]] = _no_setup_lines


class RuleOf(Protocol):
    """What the report reads of a study's settings (studies/definition.py: Settings)."""

    @property
    def rule(self) -> Callable[[Profile], Any]: ...


class Reported(Protocol):
    """What the shared report code reads of a study (studies/definition.StudyDefinition)."""

    @property
    def name(self) -> str: ...

    @property
    def words(self) -> str: ...

    @property
    def report(self) -> ReportPart: ...

    @property
    def calibration(self) -> Calibrated | None: ...

    @property
    def kinds(
        self,
    ) -> tuple[str, ...]: ...  # the kinds of server it can measure (servers/server_kind.py)

    @property
    def record(self) -> type[Any]: ...

    @property
    def settings(self) -> RuleOf: ...

    @property
    def cells_of(self) -> Callable[[Profile], Sequence[Any]]: ...  # its (first) kind's cells

    def listed_in(self, profile: Profile) -> str | None:
        """The entry of the profile's `studies` that measures it (None: none does)."""
        ...
