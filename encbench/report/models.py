"""summary.json as typed models: built from the runs, dumped with `model_dump(mode="json")`,
read back with `Summary.model_validate` by `encbench report` and `encbench compare`.  The
renderers take these models, never the JSON.

summary.json, schema SUMMARY_SCHEMA (results/schema.py):
  1 — the at-rest study at the top level, the in-transit part under "transit".
  2 — {"schema", "profile", "method", "environment", "harness", "studies": {"at-rest": …,
      "in-transit": …}}: each study's part under its name, only for the studies profiled.
      Later, a third study's part: "operations".  Later still, "servers": the server each
      study measured, by kind, name and version (absent from summaries written before).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Generic, Protocol, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationInfo,
    field_validator,
)

from encbench import stats
from encbench.engine import stopping_rule
from encbench.results.schema import SUMMARY_SCHEMA, Metric

# What another module records and the report only passes on or quotes: the environment,
# the at-rest servers record, `openssl speed` figures, the in-transit PKI and options.
Record = dict[str, Any]
Verdict = stats.Kind


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Spread(Model):
    """Mean and sample standard deviation of one variant's values over its rounds."""

    mean: float
    stdev: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        mean, stdev = stats.mean_and_stdev(values)
        return cls(mean=mean, stdev=stdev)


class Interval(Model):
    """A ratio encrypted/plain with its 95% interval."""

    ratio: float
    ci_low: float | None
    ci_high: float | None


class Estimate(Model):
    """One metric's paired comparison, encrypted against plain, over a cell's blocks:
    Hodges–Lehmann with the Wilcoxon interval (stats.hodges_lehmann), the verdict in words,
    and beside it the geometric mean with its Student-t interval (stats.t_ratio).

    Two signs: `ratio`, `ci_low`, `ci_high`, `equivalence_ci` and `t` are ratios
    encrypted/plain; `overhead_pct`, `overhead_ci_pct` and every number in `verdict` are the
    cost, positive when the encrypted side is worse."""

    n: int  # blocks of two rounds
    ratio: float
    ci_low: float | None
    ci_high: float | None
    halfwidth_pct: float | None
    overhead_pct: float  # positive: encryption costs
    overhead_ci_pct: tuple[float, float] | None
    verdict: str
    kind: Verdict
    p_value: float | None = None
    autocorrelation: float = 0.0  # lag-1, blocks; the interval is widened for it
    equivalence_ci: tuple[float, float] | None = None  # 90% interval of the ratio (TOST)
    t: Interval | None = None
    # The primary metric only: whether the cell still differs after Holm's adjustment over
    # the study's cells (None: not adjusted), and the p-value Holm held it to.
    differs_holm: bool | None = None
    holm_threshold: float | None = None
    # Encrypted significantly better in a figure encryption only adds work to
    # (Metric.cannot_improve): no effect of encryption, a difference between the sides.
    implausible_gain: bool = False

    @classmethod
    def of_blocks(
        cls,
        blocks: Sequence[stopping_rule.Block],
        metric: str,
        direction: stats.Direction,
        rule: stopping_rule.StopRule,
        more_less: tuple[str, str] = ("higher", "lower"),
        rounds: int | None = None,
    ) -> Estimate:
        found = stopping_rule.compare(blocks, metric, direction, rule, more_less, rounds)
        primary, equivalence, beside = found.estimate, found.equivalence, found.beside
        over, low, high = found.overhead_pct
        return cls(
            n=primary.n,
            ratio=primary.ratio,
            ci_low=_finite(primary.ci_low),
            ci_high=_finite(primary.ci_high),
            halfwidth_pct=_finite(primary.halfwidth_pct),
            overhead_pct=over,
            overhead_ci_pct=(low, high) if math.isfinite(primary.halfwidth_pct) else None,
            verdict=found.verdict,
            kind=found.kind,
            p_value=primary.p_value,
            autocorrelation=primary.autocorrelation,
            equivalence_ci=(equivalence.ci_low, equivalence.ci_high)
            if math.isfinite(equivalence.halfwidth_pct)
            else None,
            t=Interval(
                ratio=beside.ratio, ci_low=_finite(beside.ci_low), ci_high=_finite(beside.ci_high)
            ),
        )

    @classmethod
    def of_cell(
        cls, state: stopping_rule.CellRounds, metric: Metric, rule: stopping_rule.StopRule
    ) -> Estimate:
        """A cell's comparison in one metric, in the metric's own words (a time is longer or
        shorter): from its whole blocks, or, before the first one, its rounds without an
        interval.  A gain in a figure encryption cannot improve is flagged."""
        if not state.blocks:
            return cls.too_few(state.counted, metric.name, metric.direction)
        found = cls.of_blocks(
            state.blocks,
            metric.name,
            metric.direction,
            rule,
            metric.more_less,
            len(state.counted),
        )
        if metric.cannot_improve and found.kind == "gain":
            return found.model_copy(update={"implausible_gain": True})
        return found

    @classmethod
    def too_few(
        cls, counted: Sequence[stopping_rule.Round], metric: str, direction: stats.Direction
    ) -> Estimate:
        """Rounds but no complete block: the ratio of their geometric means, no interval."""
        ratio, over = stopping_rule.too_few(counted, metric, direction)
        return cls(
            n=0,
            ratio=ratio,
            ci_low=None,
            ci_high=None,
            halfwidth_pct=None,
            overhead_pct=over,
            overhead_ci_pct=None,
            verdict=stopping_rule.no_verdict(len(counted)),
            kind="na",
        )

    def t_estimate(self) -> stats.RatioEstimate:
        """The Student-t interval as a RatioEstimate: what Welch's test between two result
        sets (encbench compare) is built on."""
        t = self.t or Interval(ratio=self.ratio, ci_low=self.ci_low, ci_high=self.ci_high)
        low = t.ci_low if t.ci_low is not None else -math.inf
        high = t.ci_high if t.ci_high is not None else math.inf
        return stats.RatioEstimate(self.n, t.ratio, low, high)


class HolmCell(Model):
    """A cell whose 95% interval excludes no difference, before and after Holm's adjustment:
    the p-value Holm held it to, and, where its blocks were too few for the exact test to
    reach that at all (no p below 2/2ⁿ with n blocks), the fewest blocks that could."""

    cell: str  # in words, as the study's tables name it
    p_value: float
    threshold: float
    survives: bool
    blocks: int
    blocks_needed: int | None = None

    def reason(self) -> str:
        """Why a cell that differs at 95% does not after Holm's adjustment."""
        rounds = stopping_rule.ROUNDS_PER_BLOCK
        if self.blocks_needed is not None:
            return (
                f"with {self.blocks} blocks ({rounds * self.blocks} rounds) the exact "
                f"signed-rank test cannot give a p-value below "
                f"{_p(stats.p_floor(self.blocks))} and Holm asks {_p(self.threshold)} or "
                f"less: it needs at least {self.blocks_needed} blocks "
                f"({rounds * self.blocks_needed} rounds)"
            )
        return f"p = {_p(self.p_value)}, above the {_p(self.threshold)} Holm asks of it"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


class Differences(Model):
    """Across a study's measured cells, the primary metric: how many differ, how many would
    by chance alone, which still do after Holm's adjustment, how many are equivalent."""

    metric: str
    cells: int
    differ: int
    differ_holm: int
    by_chance: float  # expected false positives at 95% if no cell differed
    equivalent: int
    margin_pct: float
    rounds_rejected: int
    interference_max_pct: float
    # The cells that differ at 95%, in the study's order, each before and after Holm.
    holm_cells: list[HolmCell] = []

    def sentence(self) -> str:
        cells = "cell" if self.cells == 1 else "cells"
        return (
            f"{self.differ} of {self.cells} {cells} differ in {self.metric} at 95%; about "
            f"{self.by_chance:.1f} would by chance alone if none did; {self.differ_holm} "
            f"still differ after Holm's adjustment for {self.cells} "
            f"comparison{'' if self.cells == 1 else 's'}"
            + self.survivors()
            + f"; {self.equivalent} {'shows' if self.equivalent == 1 else 'show'} no "
            f"difference beyond ±{self.margin_pct:g}% (TOST)." + self.short_of_holm()
        )

    def survivors(self) -> str:
        """The cells that still differ after Holm, by name (marked † in the tables)."""
        names = [c.cell for c in self.holm_cells if c.survives]
        return f" ({'; '.join(names)}: marked † in the tables)" if names else ""

    def short_of_holm(self) -> str:
        """Each cell that differs at 95% but not after Holm, and why."""
        missed = [c for c in self.holm_cells if not c.survives]
        if not missed:
            return ""
        return " Not after Holm: " + "; ".join(f"{c.cell} — {c.reason()}" for c in missed) + "."

    def remeasured(self) -> str:
        if not self.rounds_rejected:
            return (
                "No round was measured again: in every run, other processes and the "
                f"hypervisor took less than {self.interference_max_pct:g}% of the machine "
                "above the cell's usual level."
            )
        return (
            f"{self.rounds_rejected} round(s) measured again because another process or the "
            f"hypervisor took more than {self.interference_max_pct:g}% of the machine above "
            "the cell's usual level during one of its runs (kept in the results file, left "
            "out of the estimates)."
        )


def adjust(
    cells: Sequence[C],
    metric: str,
    margin_pct: float,
    rule_max_pct: float,
    names: Sequence[str] | None = None,
) -> tuple[list[C], Differences | None]:
    """Holm's adjustment of the primary metric over the measured cells: each cell's primary
    estimate learns whether it still differs and the p-value Holm held it to, and the study
    gets its Differences, naming each cell that differs at 95% by `names` (one per cell)."""
    measured = [
        (i, c.comparisons[metric])
        for i, c in enumerate(cells)
        if metric in c.comparisons and c.comparisons[metric].p_value is not None
    ]
    rejected_rounds = sum(c.rounds_rejected for c in cells)
    if not measured:
        return list(cells), None
    adjusted = stopping_rule.holm_over_cells([e for _, e in measured])
    out = list(cells)
    holm_cells = []
    for (i, e), differs, threshold in zip(
        measured, adjusted.differs_holm, adjusted.thresholds, strict=True
    ):
        comps = dict(out[i].comparisons)
        comps[metric] = e.model_copy(update={"differs_holm": differs, "holm_threshold": threshold})
        out[i] = out[i].model_copy(update={"comparisons": comps})
        if e.kind in ("cost", "gain") and e.p_value is not None:
            short = not differs and stats.p_floor(e.n) > threshold
            holm_cells.append(
                HolmCell(
                    cell=names[i] if names is not None else f"cell {i + 1}",
                    p_value=e.p_value,
                    threshold=threshold,
                    survives=differs,
                    blocks=e.n,
                    blocks_needed=stats.blocks_to_reach(threshold) if short else None,
                )
            )
    return out, Differences(
        metric=metric,
        cells=len(measured),
        differ=adjusted.differ,
        differ_holm=sum(adjusted.differs_holm),
        by_chance=adjusted.by_chance,
        equivalent=adjusted.equivalent,
        margin_pct=margin_pct,
        rounds_rejected=rejected_rounds,
        interference_max_pct=rule_max_pct,
        holm_cells=holm_cells,
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


V = TypeVar("V", bound=Model)


class CellPart(Protocol):
    """What Holm's adjustment reads of a study's cell summary."""

    @property
    def comparisons(self) -> dict[str, Estimate]: ...

    @property
    def rounds_rejected(self) -> int: ...

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self: ...


C = TypeVar("C", bound=CellPart)


class Pair(Model, Generic[V]):
    """The two variants of a cell."""

    plain: V
    encrypted: V


class Harness(Model):
    """encbench's own CPU during the measured windows."""

    cpu_s: float
    measured_wall_s: float
    share_of_machine_pct: float

    @classmethod
    def of(cls, cpu_s: float, wall_s: float, cores: int) -> Harness:
        share = 100.0 * cpu_s / (wall_s * cores) if wall_s > 0 else 0.0
        return cls(cpu_s=cpu_s, measured_wall_s=wall_s, share_of_machine_pct=share)


# -- a variant's values over its rounds -------------------------------------------------
class Sample(Model):
    """One variant's values over its counted rounds: mean, sample standard deviation and the
    mean's Student-t 95% interval (None below two rounds)."""

    n: int
    mean: float
    stdev: float
    ci95: tuple[float, float] | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Sample:
        mean, stdev = stats.mean_and_stdev(values)
        return cls(
            n=len(values), mean=mean, stdev=stdev, ci95=stats.mean_ci(mean, stdev, len(values))
        )


# -- A/A calibration (report/calibration.py) ------------------------------------------------
class CalibrationCell(Model):
    """One A/A cell: B (plain twin) against A (plain) on the study's primary metric."""

    study: str
    group: str  # at rest "workload, regime"; in transit the test (and distance)
    label: str
    metric: str
    rounds: int
    a_mean: float
    b_mean: float
    ratio: float  # B / A, geometric mean of the per-round ratios
    ci_low: float | None
    ci_high: float | None
    halfwidth_pct: float | None
    round_spread_pct: float | None  # sample std of ln(B/A) over rounds, × 100
    false_positive: bool | None  # the 95% CI excludes 1; None: fewer than 2 rounds


class NoiseGroup(Model):
    """The noise floor of one study's regime/test: medians over its cells."""

    study: str
    group: str
    cells: int
    false_positives: int
    round_spread_pct: float | None
    halfwidth_pct: float | None


class Calibration(Model):
    """What an A/A calibration measured; also the per-machine file's content."""

    profile: str
    measured_at: str | None  # the last run's start (UTC)
    machine: str | None
    results: str | None  # the results directory it came from
    cells_tested: int  # cells with an interval (≥ 2 rounds)
    false_positives: int
    false_positive_rate: float | None
    false_positive_ci: tuple[float, float] | None  # Clopper–Pearson, 95%
    round_spread_pct: float | None  # median over cells
    halfwidth_pct: float | None  # median over cells
    groups: list[NoiseGroup]
    cells: list[CalibrationCell] = []
    # How its at-rest rounds shared the machine (machine/placement.py): a floor holds for runs
    # measured the same way.
    sharing: str = "sequential"
    # The servers its sandboxes ran ("MariaDB", "MySQL (the mysql root)"); None: not
    # recorded (calibrations before it was).
    servers: str | None = None


class NoiseFloor(Model):
    """The noise floor an ordinary report states: this machine's latest A/A calibration as
    the run found it in `file`, or None when none was measured."""

    file: str
    latest: Calibration | None
    # Earlier calibrations of studies `latest` did not measure, the newest for each.
    others: list[Calibration] = []


# -- the whole summary ----------------------------------------------------------------------
class MeasuredServer(Model):
    """The server a study measured, named alike for every study and kind."""

    kind: str  # its kind in encbench (servers/server_kind.py): "mariadb", "postgresql"
    name: str  # as its makers name it: "MariaDB", "MySQL", "PostgreSQL"
    version: str | None  # as it reports it; None where the study did not record it


class Summary(Model):
    schema_: int = Field(default=SUMMARY_SCHEMA, alias="schema")
    profile: str
    method: str
    environment: Record | None
    harness: Harness
    # Each study's part under its name, in the order they ran; a study the profile does not
    # run is left out.  Read back, each part is validated as its study's model: the caller
    # gives them as the validation context {"parts": {name: model}} (read_summary).
    studies: dict[str, SerializeAsAny[Model]]
    # An A/A calibration's own result (both sides plain); None for an ordinary run.
    calibration: Calibration | None = None
    # The machine's latest calibration, as an ordinary run found it.
    noise_floor: NoiseFloor | None = None
    # The profile's studies the run left out (study → why): a target; an optional study
    # this machine cannot run.
    not_measured: dict[str, str] = {}
    # The server each measured study measured, under the study's name.
    servers: dict[str, MeasuredServer] = {}

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("studies", mode="before")
    @classmethod
    def _each_as_its_study(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, dict):
            return value
        models: dict[str, type[Model]] = (info.context or {}).get("parts", {})
        out = {}
        for name, part in value.items():
            if isinstance(part, Model):
                out[name] = part
            elif name in models:
                out[name] = models[name].model_validate(part)
            else:
                raise ValueError(f"no study named {name!r} in this encbench")
        return out

    def part(self, study: str) -> Any:
        """The study's part, or None when it was not measured."""
        return self.studies.get(study)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# Each study's part of summary.json.
class StudyPart(Protocol):
    """What the shared report reads of every study's part of summary.json."""

    @property
    def target_halfwidth_pct(self) -> float: ...

    @property
    def harness(self) -> Harness: ...
