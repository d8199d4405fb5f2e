"""summary.json as typed models: built from the runs, dumped with `model_dump(mode="json")`,
read back with `Summary.model_validate` by `encbench report` and `encbench compare`.  The
renderers take these models, never the JSON.

summary.json, schema SUMMARY_SCHEMA (results/schema.py):
  1 — the at-rest study at the top level, the in-transit part under "transit".
  2 — {"schema", "profile", "method", "environment", "harness", "studies": {"at-rest": …,
      "in-transit": …}}: each study's part under its name, only for the studies profiled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from encbench import stats
from encbench.results.schema import SUMMARY_SCHEMA

# What another module records and the report only passes on or quotes: the environment,
# the at-rest servers record, `openssl speed` figures, the in-transit PKI and options.
Record = dict[str, Any]
Verdict = Literal["cost", "gain", "same", "unsure", "na"]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spread(Model):
    """Mean and sample standard deviation of one variant's values over its rounds."""

    mean: float
    stdev: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        mean, stdev = stats.mean_and_stdev(values)
        return cls(mean=mean, stdev=stdev)


class Estimate(Model):
    """One metric's paired comparison, encrypted against plain (stats.paired_ratio)."""

    n: int
    ratio: float
    ci_low: float | None
    ci_high: float | None
    halfwidth_pct: float | None
    overhead_pct: float  # positive: encryption costs
    overhead_ci_pct: tuple[float, float] | None
    verdict: str

    @classmethod
    def paired(
        cls,
        encrypted: Sequence[float],
        plain: Sequence[float],
        direction: stats.Direction,
        target_pct: float,
    ) -> Estimate:
        estimate = stats.paired_ratio(encrypted, plain)
        over, low, high = stats.overhead_pct(estimate, direction)
        return cls(
            n=estimate.n,
            ratio=estimate.ratio,
            ci_low=_finite(estimate.ci_low),
            ci_high=_finite(estimate.ci_high),
            halfwidth_pct=_finite(estimate.halfwidth_pct),
            overhead_pct=over,
            overhead_ci_pct=(low, high) if estimate.n > 1 else None,
            verdict=stats.verdict(estimate, target_pct, direction),
        )

    def ratio_estimate(self) -> stats.RatioEstimate:
        low = self.ci_low if self.ci_low is not None else -math.inf
        high = self.ci_high if self.ci_high is not None else math.inf
        return stats.RatioEstimate(self.n, self.ratio, low, high)

    @property
    def kind(self) -> Verdict:
        """cost, gain, same or unsure: how the HTML report marks this verdict."""
        if self.verdict.startswith("inconclusive"):
            return "unsure"
        if self.verdict.startswith("no measurable difference"):
            return "same"
        return "cost" if self.overhead_pct > 0 else "gain"


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


V = TypeVar("V", bound=Model)


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


# -- the at-rest study ----------------------------------------------------------------------
class AtRestVariant(Model):
    tps: Spread
    qps: Spread
    latency_avg_ms: Spread
    latency_p95_ms: Spread
    cpu_ms_per_txn: Spread
    hit_ratio: Spread
    pages_read_per_txn: Spread
    pages_written_per_txn: Spread
    errors: int
    reconnects: int


class Prediction(Model):
    """The cipher's own work beside the measured overhead (report/prediction.py)."""

    cipher: str
    cipher_mb_per_s: float
    pages_per_txn: float
    cipher_ms_per_txn: float
    predicted_pct: float
    agreement: str


class AtRestCell(Model):
    workload: str
    regime: str
    threads: int
    rounds: int
    measured_s: float
    status: str
    other_load_pct: float | None = None
    variants: Pair[AtRestVariant] | None = None
    comparisons: dict[str, Estimate] = {}  # by metric (RunRecord.METRICS); empty: unmeasured
    prediction: Prediction | None = None


class AtRestSummary(Model):
    target_halfwidth_pct: float
    write_workload_state: str
    servers: Record | None
    crypto: Record | None
    harness: Harness
    cells: list[AtRestCell]


# -- the in-transit study -------------------------------------------------------------------
class Rate(Model):
    mean: float
    stdev: float
    ci95: tuple[float, float] | None


class PerEvent(Model):
    mean: float
    total_s: float | None = None


class TransitVariant(Model):
    rate: Rate
    latency_avg_ms: Spread
    # Totals over all rounds, not a mean of per-run values: at a distance a run holds a
    # handful of connections and the CPU clock ticks in 10 ms steps.
    server_cpu_ms_per_event: PerEvent
    tunnel_cpu_ms_per_event: PerEvent
    encryption_cpu_ms_per_event: Spread
    tls_handshakes: int
    tunnel_handshakes: int
    tunnel_resumed: int
    session_cache_hits: int
    events: int
    errors: int


class TransitCellSummary(Model):
    test: str
    method: str
    key_type: str
    cipher: str
    rtt_ms: float
    threads: int
    resume: bool
    label: str
    unit: str
    rounds: int
    measured_s: float
    status: str
    variants: Pair[TransitVariant] | None = None
    comparisons: dict[str, Estimate] = {}
    other_load_pct_of_core: float | None = None
    proof: dict[str, str] | None = None

    @property
    def key(self) -> tuple[str, str, str, str, float, int, bool]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (
            self.test,
            self.method,
            self.key_type,
            self.cipher,
            self.rtt_ms,
            self.threads,
            self.resume,
        )


class InTransitSummary(Model):
    target_halfwidth_pct: float
    tls_version: str
    mariadb_version: str | None
    pki: dict[str, Record] | None
    notes: dict[str, str] | None
    server_options: Record | None
    delay_method: dict[str, str] | None
    link: Record | None
    bulk_table: Record | None
    session_cache_hits: int
    tls_handshakes: int
    harness: Harness
    cells: list[TransitCellSummary]


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


class NoiseFloor(Model):
    """The noise floor an ordinary report states: this machine's latest A/A calibration as
    the run found it in `file`, or None when none was measured."""

    file: str
    latest: Calibration | None


# -- the whole summary ----------------------------------------------------------------------
class Studies(Model):
    """Each study's part under its name; a study the profile does not run is left out."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    at_rest: AtRestSummary | None = Field(default=None, alias="at-rest")
    in_transit: InTransitSummary | None = Field(default=None, alias="in-transit")

    @model_serializer(mode="wrap")
    def _present_only(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class Summary(Model):
    schema_: int = Field(default=SUMMARY_SCHEMA, alias="schema")
    profile: str
    method: str
    environment: Record | None
    harness: Harness
    studies: Studies
    # An A/A calibration's own result (both sides plain); None for an ordinary run.
    calibration: Calibration | None = None
    # The machine's latest calibration, as an ordinary run found it.
    noise_floor: NoiseFloor | None = None

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
