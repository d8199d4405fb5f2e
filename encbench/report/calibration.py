"""The A/A calibration: encbench's own false-positive rate and noise floor on this machine.

A calibration (profile `calibration = true`, or `encbench calibrate`) runs the same studies
through the same engine with both sides identical: B is a twin of A (at rest two plain
servers, in transit plain TCP against plain TCP).  Every difference it finds is noise, so:

- the false-positive rate is the share of cells whose 95% interval of B/A (the study's
  primary metric: TPS at rest, the rate in transit) excludes 1, with an exact
  Clopper–Pearson 95% interval for that share (`scipy.stats.binomtest`);
- the noise floor is, per study and regime/test, the median over cells of the per-round
  spread (sample standard deviation of ln(B/A) over a cell's rounds) and of the CI
  half-width the cell reached.

The result goes to the results directory (summary.json; calibration.json when the run is
complete) and to a per-machine file, $XDG_STATE_HOME/encbench/calibration.json, from which
every ordinary run takes the noise floor its report states (a copy in DIR/noise-floor.json,
so that `encbench report DIR` re-renders what the run saw).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

from encbench import stats
from encbench.engine import rounds as plan
from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report.models import Calibration, CalibrationCell, NoiseFloor, NoiseGroup, Record
from encbench.report.parts import Reported
from encbench.results.schema import primary_metric
from encbench.results.store import ResultStore
from encbench.servers.mariadb import installs

METHOD = (
    "A/A: the same estimate as every real run (Hodges–Lehmann of the block log ratios B/A, B a "
    "twin of A, exact Wilcoxon 95% CI widened for autocorrelation, Stein's guard); false "
    "positive = the CI excludes 1; rate with a Clopper–Pearson 95% CI"
)
NOMINAL_RATE = 0.05  # what a 95% interval promises
ENOUGH_CELLS = 40  # fewer leave the rate's interval too wide to judge 5% by
SNAPSHOT = "noise-floor.json"  # an ordinary run's copy of the machine's calibration


# -- the statistics (pure) --------------------------------------------------------------------
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval of k successes in n trials."""
    from scipy.stats import binomtest  # scipy.stats takes a second to import: only here

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def aa_cell(
    study: str,
    group: str,
    label: str,
    metric: str,
    state: stopping_rule.CellRounds,
    rule: stopping_rule.StopRule,
) -> CalibrationCell:
    """One cell's B/A comparison on `metric`, by the same estimate as a real run."""
    rounds = state.counted
    a = [float(getattr(r.runs["plain"], metric)) for r in rounds]
    b = [float(getattr(r.runs["encrypted"], metric)) for r in rounds]
    logs = np.log(np.asarray(b) / np.asarray(a))
    found = stopping_rule.estimate(state.blocks, metric, rule)
    # No interval (fewer than 6 blocks): the cell cannot be judged, not a negative.
    estimate = found or stats.RatioEstimate(0, 1.0, -np.inf, np.inf)
    tested = bool(np.isfinite(estimate.halfwidth_pct)) and len(logs) >= 2
    return CalibrationCell(
        study=study,
        group=group,
        label=label,
        metric=metric,
        rounds=len(rounds),
        a_mean=float(np.mean(a)),
        b_mean=float(np.mean(b)),
        ratio=estimate.ratio,
        ci_low=estimate.ci_low if tested else None,
        ci_high=estimate.ci_high if tested else None,
        halfwidth_pct=estimate.halfwidth_pct if tested else None,
        round_spread_pct=100.0 * float(np.std(logs, ddof=1)) if tested else None,
        false_positive=estimate.significant if tested else None,
    )


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarize(
    profile: str,
    cells: Sequence[CalibrationCell],
    *,
    measured_at: str | None = None,
    machine: str | None = None,
    results: str | None = None,
    sharing: str = "sequential",
    servers: str | None = None,
) -> Calibration:
    """The false-positive rate and the noise floor over a calibration's cells."""
    tested = [c for c in cells if c.false_positive is not None]
    k = sum(1 for c in tested if c.false_positive)
    groups: dict[tuple[str, str], list[CalibrationCell]] = {}
    for c in tested:
        groups.setdefault((c.study, c.group), []).append(c)
    return Calibration(
        profile=profile,
        measured_at=measured_at,
        machine=machine,
        results=results,
        servers=servers,
        cells_tested=len(tested),
        false_positives=k,
        false_positive_rate=k / len(tested) if tested else None,
        false_positive_ci=clopper_pearson(k, len(tested)) if tested else None,
        round_spread_pct=_median([c.round_spread_pct for c in tested]),
        halfwidth_pct=_median([c.halfwidth_pct for c in tested]),
        groups=[
            NoiseGroup(
                study=study,
                group=group,
                cells=len(members),
                false_positives=sum(1 for c in members if c.false_positive),
                round_spread_pct=_median([c.round_spread_pct for c in members]),
                halfwidth_pct=_median([c.halfwidth_pct for c in members]),
            )
            for (study, group), members in groups.items()
        ],
        cells=list(cells),
        sharing=sharing,
    )


# -- from a results directory ---------------------------------------------------------------
def cells_of(
    store: ResultStore, profile: Profile, studies: Sequence[Reported]
) -> list[CalibrationCell]:
    """Every measured cell of the profile's calibrated studies, B against A on its primary
    metric."""
    found: list[CalibrationCell] = []
    for study in studies:
        if study.calibration is None or study.name not in profile.studies:
            continue
        runs = store.runs(study.record)
        metric = primary_metric(study.record.METRICS).name
        rule = study.settings.rule(profile)
        for cell in study.cells_of(profile):
            state = plan.cell_rounds(runs, cell, rule)
            if state.counted:
                group, label = study.calibration.label(cell)
                found.append(aa_cell(study.name, group, label, metric, state, rule))
    return found


def machine_of(environment: Record | None) -> str | None:
    if not environment:
        return None
    cpu = environment.get("cpu") or {}
    return (
        f"{cpu.get('model', '?')}, {cpu.get('cores', '?')} cores, kernel "
        f"{environment.get('kernel', '?')}"
    )


def last_start(store: ResultStore, profile: Profile, studies: Sequence[Reported]) -> str | None:
    """When the calibration was measured: its last run's start, from the records alone."""
    starts = [
        r.started_at
        for study in studies
        if study.calibration is not None and study.name in profile.studies
        for r in store.runs(study.record)
    ]
    return max(starts) if starts else None


def build(
    store: ResultStore,
    profile: Profile,
    environment: Record | None,
    studies: Sequence[Reported],
    sharing: str = "sequential",
) -> Calibration:
    return summarize(
        profile.name,
        cells_of(store, profile, studies),
        measured_at=last_start(store, profile, studies),
        machine=machine_of(environment),
        results=str(store.path),
        sharing=sharing,
        servers=servers_of(profile),
    )


# What a calibration that recorded no servers ran: this host's packages.
SYSTEM_SERVERS = installs.family_of(installs.SYSTEM)


def servers_of(profile: Profile) -> str:
    """The servers a calibration's sandboxes ran, as its noise floor names them."""
    install = profile.server.install
    family = installs.family_of(install)
    return family if install == installs.SYSTEM else f"{family} (the {install} root)"


def studies_of(result: Calibration) -> set[str]:
    """The studies a calibration measured (its cells; a file without them, its groups)."""
    return {c.study for c in result.cells} | {g.study for g in result.groups}


def noise_floor_of(store: ResultStore) -> NoiseFloor | None:
    """The noise floor a run's report states: the machine's calibration as the run found it
    (report/noise_floor.py writes the snapshot), or None in a directory without one."""
    data = store.read_json(SNAPSHOT)
    return NoiseFloor.model_validate(data) if data is not None else None
