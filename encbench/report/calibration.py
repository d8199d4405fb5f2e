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

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from encbench import state, stats
from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.models import Calibration, CalibrationCell, NoiseFloor, NoiseGroup, Record
from encbench.results import store as results_store
from encbench.results.schema import (
    CellKey,
    RunRecord,
    SstCell,
    SstRecord,
    TransitCell,
    TransitRecord,
    primary_metric,
)
from encbench.results.store import ResultStore
from encbench.studies.at_rest.cells import cells as at_rest_cells
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.state_transfer import cells as sst_cells

METHOD = (
    "A/A: the same estimate as every real run (Hodges–Lehmann of the block log ratios B/A, B a "
    "twin of A, exact Wilcoxon 95% CI widened for autocorrelation, Stein's guard); false "
    "positive = the CI excludes 1; rate with a Clopper–Pearson 95% CI"
)
NOMINAL_RATE = 0.05  # what a 95% interval promises
ENOUGH_CELLS = 40  # fewer leave the rate's interval too wide to judge 5% by
MACHINE_FILE_SCHEMA = 1
SNAPSHOT = "noise-floor.json"  # an ordinary run's copy of the machine's calibration
RESULT = "calibration.json"  # a finished calibration's result in its results directory


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
    state: plan.CellRounds,
    rule: plan.StopRule,
) -> CalibrationCell:
    """One cell's B/A comparison on `metric`, by the same estimate as a real run."""
    rounds = state.counted
    a = [float(getattr(r.runs["plain"], metric)) for r in rounds]
    b = [float(getattr(r.runs["encrypted"], metric)) for r in rounds]
    logs = np.log(np.asarray(b) / np.asarray(a))
    found = plan.estimate(state.blocks, metric, rule)
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
def transit_label(cell: TransitCell) -> tuple[str, str]:
    """(group, label) of an in-transit cell: what the row measured, not its encrypted path
    (in a calibration none is taken); a tunnel or key-type row says which profile row it is."""
    group = cell.test + (f", RTT {cell.rtt_ms:g} ms" if cell.rtt_ms else "")
    row = "" if cell.method == "tls" else f", the {cell.method} row"
    return group, f"{group}, {cell.threads} thr{row}"


def at_rest_label(cell: CellKey) -> tuple[str, str]:
    group = f"{cell.workload}, {cell.regime}"
    return group, f"{group}, {cell.threads} thr"


def state_transfer_label(cell: SstCell) -> tuple[str, str]:
    """An SST cell's method is its group; its encrypted transport is not what a calibration
    ran (both sides plain), so the label names the profile's row, not a cipher."""
    row = f", the {cell.cipher} row" if cell.cipher else ""
    aesni = "" if cell.aesni == "on" else f", AES-NI {cell.aesni}"
    return cell.method, f"{cell.method}, {cell.backup_threads} thr{row}{aesni}"


@dataclass(frozen=True)
class Calibrated:
    """What the calibration reads of one study: its runs, its cells, its stopping rule, and
    each cell's group and label in the noise-floor tables."""

    record_type: type[Any]
    cells: Callable[[Profile], Sequence[Any]]
    rule: Callable[[Profile], plan.StopRule]
    label: Callable[[Any], tuple[str, str]]


# The studies that have an A/A calibration, in the order they run.
CALIBRATED: dict[str, Calibrated] = {
    "at-rest": Calibrated(RunRecord, at_rest_cells, lambda p: p.measure, at_rest_label),
    "in-transit": Calibrated(
        TransitRecord, transit_cells.cells, lambda p: p.transit, transit_label
    ),
    "state-transfer": Calibrated(
        SstRecord, sst_cells.cells, lambda p: p.state_transfer, state_transfer_label
    ),
}


def cells_of(store: ResultStore, profile: Profile) -> list[CalibrationCell]:
    """Every measured cell of the profile's studies, B against A on its primary metric."""
    found: list[CalibrationCell] = []
    for study, how in CALIBRATED.items():
        if study not in profile.studies:
            continue
        runs = store.runs(how.record_type)
        metric = primary_metric(how.record_type.METRICS).name
        rule = how.rule(profile)
        for cell in how.cells(profile):
            state = plan.cell_rounds(runs, cell, rule)
            if state.counted:
                group, label = how.label(cell)
                found.append(aa_cell(study, group, label, metric, state, rule))
    return found


def machine_of(environment: Record | None) -> str | None:
    if not environment:
        return None
    cpu = environment.get("cpu") or {}
    return (
        f"{cpu.get('model', '?')}, {cpu.get('cores', '?')} cores, kernel "
        f"{environment.get('kernel', '?')}"
    )


def last_start(store: ResultStore, profile: Profile) -> str | None:
    """When the calibration was measured: its last run's start, from the records alone."""
    starts = [
        r.started_at
        for study, how in CALIBRATED.items()
        if study in profile.studies
        for r in store.runs(how.record_type)
    ]
    return max(starts) if starts else None


def build(store: ResultStore, profile: Profile, environment: Record | None) -> Calibration:
    return summarize(
        profile.name,
        cells_of(store, profile),
        measured_at=last_start(store, profile),
        machine=machine_of(environment),
        results=str(store.path),
        sharing=profile.measure.sharing,
    )


# -- the per-machine file -------------------------------------------------------------------
def machine_file() -> Path:
    """Beside the sandbox registry (servers/registry.py): this machine's (and user's) state."""
    return state.base() / "calibration.json"


def read_machine() -> NoiseFloor:
    """This machine's latest calibration, and the newest of each study it does not cover;
    an unreadable or foreign file counts as none."""
    path = machine_file()
    latest, others = None, []
    try:
        data = json.loads(path.read_text())
        if isinstance(data, dict) and data.get("schema") == MACHINE_FILE_SCHEMA:
            latest = Calibration.model_validate(data["calibration"])
            others = [Calibration.model_validate(c) for c in data.get("others") or []]
    except (OSError, ValueError, KeyError):
        latest, others = None, []
    return NoiseFloor(file=str(path), latest=latest, others=others)


def studies_of(result: Calibration) -> set[str]:
    """The studies a calibration measured (its cells; a file without them, its groups)."""
    return {c.study for c in result.cells} | {g.study for g in result.groups}


def write_machine(result: Calibration) -> Path:
    """`result` becomes the latest; an earlier calibration stays beside it only for studies
    `result` did not measure (calibrating the state transfer alone keeps the at-rest floor)."""
    path = machine_file()
    before = read_machine()
    earlier = [c for c in (before.latest, *before.others) if c is not None]
    covered = studies_of(result)
    kept = [c for c in earlier if studies_of(c) and not studies_of(c) & covered]
    data = {
        "schema": MACHINE_FILE_SCHEMA,
        "calibration": result.model_dump(mode="json"),
        "others": [c.model_dump(mode="json") for c in kept],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    results_store.write_json(path, data)
    return path


def record_finished(store: ResultStore, result: Calibration) -> Path:
    """A complete calibration: its result into the results directory and the machine file."""
    store.write_json(RESULT, result.model_dump(mode="json"))
    return write_machine(result)


def snapshot_noise_floor(store: ResultStore) -> None:
    """An ordinary run keeps the machine's calibration as it was when the run began."""
    if store.read_json(SNAPSHOT) is None:
        store.write_json(SNAPSHOT, read_machine().model_dump(mode="json"))


def noise_floor_of(store: ResultStore) -> NoiseFloor:
    """The noise floor a run's report states: its snapshot, or (a directory from before
    snapshots) the machine's latest calibration now."""
    data = store.read_json(SNAPSHOT)
    return NoiseFloor.model_validate(data) if data is not None else read_machine()
