"""What every study's records share: the Metric a study compares, the words of a time, the
way a record is declared (`record`), and summary.json's schema version.  Each study's
records (its cells, its run record, its results file's schema and history) live in its
package: studies/<name>/records.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, asdict, dataclass
from typing import Any, ClassVar, Self, TypeVar, cast, dataclass_transform

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass as pydantic_dataclass

from encbench.stats import Direction

# summary.json:
#   1 — one study at the top level, the in-transit part under "transit".
#   2 — every study under "studies": {"at-rest": {...}, "in-transit": {...}}.
SUMMARY_SCHEMA = 2


@dataclass(frozen=True)
class Metric:
    """One quantity compared between the variants of a cell: a field of the study's record."""

    name: str  # the record's attribute
    unit: str
    direction: Direction
    primary: bool = False  # the stopping rule and the headline verdict use this one
    # The verdict's words for a lower-is-better metric that went up / down: a time is
    # "longer" / "shorter" (stats.verdict).
    more_less: tuple[str, str] = ("higher", "lower")
    # Encryption only adds work to this figure (the same server or path doing the same thing
    # plus a cipher), so an encrypted side significantly better in it is no effect of
    # encryption: the report flags it (report/suspect.py).
    cannot_improve: bool = False


def primary_metric(metrics: tuple[Metric, ...]) -> Metric:
    return next(m for m in metrics if m.primary)


# A time is "longer" or "shorter" in a verdict, not "higher" or "lower" (stats.verdict).
TIME_WORDS = ("longer", "shorter")


T = TypeVar("T")
# Strict: a record is made from this run's own figures or read back from its JSON line, and a
# string or a bool where a number belongs is a mistake to refuse, not a value to coerce (an
# int is still a float).  Extra keys of an old line are dropped by each from_json.
RECORD_CONFIG = ConfigDict(strict=True, defer_build=True)


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """A run record or a cell: a frozen pydantic dataclass, every field checked against its
    type when it is made (its __post_init__ then refuses impossible values), and still a
    dataclass to `dataclasses.replace` and `asdict` — the JSON on disk is what it was."""
    return cast(type[T], pydantic_dataclass(frozen=True, config=RECORD_CONFIG)(cls))


@dataclass(frozen=True)
class Earlier:
    """A results file an earlier encbench wrote for what is now this record type's study
    (`<study>.jsonl` at `schema`): the store reads its lines as this type's, each made one
    of this type's JSON lines by `convert`."""

    study: str
    schema: int
    convert: Callable[[dict[str, Any]], dict[str, Any]]


class RunLine:
    """The JSON line of a run record, written once for every study: its fields (`asdict`),
    its results file's schema, and the figures derived from its fields that a reader wants
    beside them (FIGURES: names of its properties); read back (from_json), the schema is
    checked, those figures dropped and its cell made (fields_of)."""

    SCHEMA: ClassVar[int]
    CELL: ClassVar[type[Any]]
    FIGURES: ClassVar[tuple[str, ...]] = ()
    # The files of earlier encbench versions read as this type's (Earlier).
    EARLIER: ClassVar[tuple[Earlier, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(cast(Any, self))
        data["schema"] = self.SCHEMA
        data.update({name: getattr(self, name) for name in self.FIGURES})
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cast(Self, cast(Any, cls)(**fields_of(cls, data, cls.CELL)))


@record
class RecordedRun(RunLine):
    """The fields every study's run record begins with, as the engine gives them to it
    (engine/study.py: Run.record_fields): which cell (a study's record narrows its type),
    round and variant, its place in the round, the session, when it started and how long it
    took; and what else ran over its timed window (`window_fields`: by keyword).  A study's
    record adds its own after them."""

    cell: Any
    round: int
    variant: str
    position: int
    session: str
    started_at: str
    wall_s: float
    # What else ran over its timed window, as study_basics.window_fields reads it: the load
    # client's and other processes' CPU and stolen CPU, in seconds; the interference they add
    # up to as a share of the machine (engine/clocks.py: a round above the profile's
    # interference_max_pct is measured again); and what the run used of the machine, its data
    # device and, on a rate-limited link, the link (Usage: the report says from it what bound
    # the cell).  0 or None in lines written before a study recorded them.  Keyword-only: a
    # study's own fields follow the engine's by position.
    _: KW_ONLY
    harness_cpu_s: float
    other_cpu_s: float = 0.0
    steal_s: float = 0.0
    interference_pct: float = 0.0
    usage: Usage | None = None

    def timed_window_s(self) -> float:
        """The seconds its harness's and other processes' CPU are set against (the report's
        shares of the machine): the whole run, unless a study times a stretch of it."""
        return self.wall_s

    def impossible(self, what: str) -> ValueError:
        """The error a record's __post_init__ raises for figures no run can have."""
        return ValueError(
            f"impossible run for {self.cell.label} round {self.round} {self.variant}: {what}"
        )

    def refuse_empty(self, count: int, rate: float, what: str) -> None:
        """Refuses a run that took no time, counted no `what` (transactions, events) or ran
        at no rate: no run can have done so, and a mean over it would mislead."""
        if self.wall_s <= 0 or count <= 0 or rate <= 0:
            raise self.impossible(f"{count} {what} in {self.wall_s:.1f} s")


def mib_per_s(count_bytes: float, seconds: float) -> float:
    """A record's rate of bytes over a timed stretch, in MiB/s; 0 where nothing was timed
    (the stretch a run did not have)."""
    return count_bytes / 2**20 / seconds if seconds > 0 else 0.0


def fields_of(record_type: Any, data: Mapping[str, Any], cell_type: type[Any]) -> dict[str, Any]:
    """A results line as its record's fields: its schema checked against the record type's,
    the figures written beside the fields for readers (`hit_ratio`, …) dropped, its cell made."""
    if data.get("schema") != record_type.SCHEMA:
        raise ValueError(f"schema {data.get('schema')!r} is not {record_type.SCHEMA}")
    fields = {k: v for k, v in data.items() if k in record_type.__dataclass_fields__}
    fields["cell"] = cell_type(**data["cell"])
    if fields.get("usage") is not None:
        fields["usage"] = Usage(**fields["usage"])
    return fields


# -- what a run used of the machine --------------------------------------------------------
# Every study's run record may carry one (`usage`, None in lines written before it existed);
# engine/clocks.py makes it from the measured window's readings (Window.usage), and
# report/bound.py says from it what bound each cell.


@record
class Usage:
    """What one measured run used of the machine over its window."""

    cores: float  # the machine's

    # The machine's busy and stolen CPU over the window, in cores: what the run, its client
    # and everything else kept off the cores (stolen time is a core the run did not get).
    cores_busy: float
    # The measured server's own CPU over its window, in cores (None: not measured).
    server_cores: float | None = None
    # The server's CPU allowance in an instance shape (its quota, else its CPUs); None: the
    # machine's cores.
    server_cores_allowed: float | None = None
    # The data device (/proc/diskstats name) and what it did, as iostat shows it
    # (machine/disk_window.py); None where the run had no device of its own to read.
    disk_device: str = ""
    disk_busy_pct: float | None = None
    disk_iops: float | None = None
    disk_read_mib_s: float | None = None
    disk_write_mib_s: float | None = None
    disk_queue: float | None = None
    disk_await_ms: float | None = None
    # In an instance shape with an IOPS cap (profile `iops`): the reads and the writes per
    # second the server itself submitted to its disk (its cgroup's counters), and the cap,
    # which holds for each.  A throttled server leaves the device idle, so %util cannot show
    # the cap: these do.  None: no cap.
    server_read_iops: float | None = None
    server_write_iops: float | None = None
    iops_cap: float | None = None
    # The bytes a network link carried per second, and what the link allows (a shaped link's
    # rate; None: unshaped loopback or a namespace link without a limit).
    link_mib_s: float | None = None
    link_capacity_mib_s: float | None = None
