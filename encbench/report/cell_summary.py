"""The fields every study's cell summary shares after its own identity fields: its label,
how many rounds counted and were rejected, its time and status, both variants' figures and
the estimates between them.  One base, so that a study's model names only what is its own.

A subclass's fields come after these in summary.json (pydantic puts a base's fields first);
readers go by name, and the reports render by attribute, so the order changes nothing."""

from __future__ import annotations

from typing import Generic, TypeVar

from encbench.report.bound import Bounded
from encbench.report.models import Differences, Estimate, Harness, Model, Pair, Record

V = TypeVar("V", bound=Model)


class CellSummary(Bounded, Generic[V]):
    label: str
    rounds: int
    # Required where a study always wrote it; older summaries of the others read as 0
    # (a subclass that requires it says so again).
    rounds_rejected: int = 0
    measured_s: float
    status: str
    variants: Pair[V] | None = None
    # pydantic copies the default per instance; ruff cannot see that through Generic.
    comparisons: dict[str, Estimate] = {}  # noqa: RUF012
    other_load_pct_of_core: float | None = None


class GaleraCell(CellSummary[V], Generic[V]):
    """A Galera study's cell: beside CellSummary's fields, the rounds measured again (these
    studies always wrote them) and the cell's proof on the wire, per cluster or variant
    (the study's record, `<study>.json`, "proofs" by cell)."""

    rounds_rejected: int
    proof: Record | None = None


C = TypeVar("C", bound=Model)


class StudyPart(Model, Generic[C]):
    """The fields every study's part of summary.json has (study_summary.study_fields writes
    them): the stopping rule's target, the harness's share of the machine, every cell
    summarized, and the differences left after Holm's adjustment."""

    target_halfwidth_pct: float
    harness: Harness
    cells: list[C]
    differences: Differences | None = None


class GaleraPart(StudyPart[C], Generic[C]):
    """A Galera study's part: beside StudyPart's fields, what its record (`<study>.json`) says
    of the cluster it measured on, as the study's set-up names it (GALERA_SETUP).  None where
    the record had none, and in a part written before its study copied them (rejoin's were
    not): such a summary.json still opens in `compare`."""

    mariadb_version: str | None = None
    galera_version: str | None = None
    data: Record | None = None
    link: Record | None = None
    key_type: str | None = None
    certificate: str | None = None


# The record's fields a GaleraPart copies (study_summary.recorded).
GALERA_SETUP = tuple(name for name in GaleraPart.model_fields if name not in StudyPart.model_fields)
