"""What every study's part of the report shares: a cell's summary as every study builds it
(its rounds, status, variants, comparisons and the load it shared the machine with), the
harness's share, and numbers as the tables print them: an overhead with its interval, a
sample's mean with its interval, and the machine's cores."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from encbench.engine import rounds as plan
from encbench.engine import stopping_rule
from encbench.report.bound import Bounded, cell_bound
from encbench.report.models import (
    CellPart,
    Differences,
    Estimate,
    Harness,
    Model,
    Record,
    Sample,
    adjust,
)
from encbench.results.schema import Metric, primary_metric

# What the rounds of a cell that ran out before it finished amount to.
INCOMPLETE = "incomplete (run stopped before the cell finished)"


class Timed(Protocol):
    """What the shared figures read of a run record: every study's records have it."""

    @property
    def harness_cpu_s(self) -> float: ...
    @property
    def other_cpu_s(self) -> float: ...
    @property
    def steal_s(self) -> float: ...
    def timed_window_s(self) -> float: ...


R = TypeVar("R")
T = TypeVar("T", bound=Timed)
K = TypeVar("K", bound=Hashable)
C = TypeVar("C", bound=CellPart)
M = TypeVar("M", bound=Model)


def sample(runs: Sequence[R], value: Callable[[R], float]) -> Sample:
    """One variant's `value` over its runs: mean, spread and the mean's interval."""
    return Sample.of([value(r) for r in runs])


def other_load_pct(runs: Sequence[T], cores: int = 1) -> float:
    """Other processes' CPU (and stolen CPU) during a cell's measured runs, as a share of
    `cores` over their measured time: the load its rounds had to share the machine with."""
    wall = sum(r.timed_window_s() for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    return 100.0 * other / (wall * cores) if wall > 0 else 0.0


def harness_share(runs: Sequence[T], cores: int) -> Harness:
    """encbench's own CPU while the runs were measuring, as a share of the whole machine."""
    return Harness.of(
        sum(r.harness_cpu_s for r in runs), sum(r.timed_window_s() for r in runs), cores
    )


def comparable(runs: Sequence[Any], metric: str) -> bool:
    """Whether a metric has a ratio to estimate: every run has it (a target's runs have no
    server CPU), above zero (a stage a script did not log has none)."""
    values = [getattr(run, metric) for run in runs]
    return all(v is not None for v in values) and all(float(v) > 0 for v in values)


def summarize_cell(
    model: type[M],
    identity: Mapping[str, Any],
    state: stopping_rule.CellRounds,
    rule: stopping_rule.StopRule,
    metrics: Sequence[Metric],
    variant_stats: Callable[[list[T]], Any],
    *,
    cores: int = 1,
    load_field: str = "other_load_pct_of_core",
    not_measured: str = "not measured",
) -> M:
    """A cell's summary, as every study states it: `identity` (the cell's own fields), the
    rounds that count and those measured again, why it stopped (the stopping rule reads the
    primary one of `metrics`), each variant's `variant_stats`, every comparable metric's
    estimate over the blocks, and the other load in `load_field` (as a share of `cores`).  A
    cell without a counted round is `not_measured`.  A study adds its own fields after."""
    counted = state.counted
    fields = {
        **identity,
        "rounds": len(counted),
        "rounds_rejected": len(state.rejected),
        "measured_s": state.wall_s,
    }
    if not counted:
        return model.model_validate({**fields, "status": not_measured})
    runs: list[T] = [run for r in counted for run in r.runs.values()]
    return model.model_validate(
        {
            **fields,
            "status": stopping_rule.stop_reason(state, rule, primary_metric(tuple(metrics)).name)
            or INCOMPLETE,
            "variants": {
                variant: variant_stats([r.runs[variant] for r in counted])
                for variant in stopping_rule.VARIANTS
            },
            "comparisons": {
                m.name: Estimate.of_cell(state, m, rule)
                for m in metrics
                if comparable(runs, m.name)
            },
            load_field: other_load_pct(runs, cores),
            # What bound the cell, where its model says it and its runs recorded usage.
            **({"bound": cell_bound(counted)} if issubclass(model, Bounded) else {}),
        }
    )


def summarize_cells(
    cells: Iterable[K],
    runs: Iterable[plan.Measured],
    rule: stopping_rule.StopRule,
    primary: str,
    summarize: Callable[[K, stopping_rule.CellRounds], C],
    name: Callable[[K], str] | None = None,
) -> tuple[list[C], Differences | None]:
    """Every cell of a study summarized from its rounds, then Holm's adjustment of the
    primary metric over them; a cell is named, where the summary says which still differ,
    by `name` (default: its label)."""
    measured = list(runs)
    keys = list(cells)
    return adjust(
        # Each cell's rounds by its own rule (its kind's section), as the engine counted them.
        [summarize(c, plan.cell_rounds(measured, c, rule.for_cell(c))) for c in keys],
        primary,
        rule.equivalence_margin_pct,
        rule.interference_max_pct,
        [name(cell) if name else str(getattr(cell, "label", cell)) for cell in keys],
    )


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def overhead_cell(comp: Estimate) -> str:
    ci = comp.overhead_ci_pct
    if not ci:
        return f"{comp.overhead_pct:+.1f}%"
    return f"{comp.overhead_pct:+.1f}% ({ci[0]:+.1f} … {ci[1]:+.1f})"


def sample_text(s: Sample | None, unit: str = "", digits: int = 2) -> str:
    """A variant's mean with its 95% interval: "1.25 s (1.10–1.40)"."""
    if s is None:
        return "–"
    unit = f" {unit}" if unit else ""
    if s.ci95 is None:
        return f"{fmt(s.mean, digits)}{unit}"
    return f"{fmt(s.mean, digits)}{unit} ({fmt(s.ci95[0], digits)}–{fmt(s.ci95[1], digits)})"


def cores_of(environment: Record | None) -> int:
    return int((environment or {}).get("cpu", {}).get("cores", 1))


class TableCell(Protocol):
    """What a study's table row reads of its cell summary."""

    @property
    def comparisons(self) -> dict[str, Estimate]: ...

    @property
    def status(self) -> str: ...

    @property
    def rounds(self) -> int: ...

    @property
    def rounds_rejected(self) -> int: ...


# The marks a verdict carries in a table, each explained under it (verdict_notes).
HOLM_MARK = "†"
IMPLAUSIBLE_MARK = "⚠"


def verdict_marks(comp: Estimate) -> str:
    """ " †" where the cell still differs after Holm's adjustment over the study's cells,
    " ⚠" where encrypted came out better in a figure encryption only adds work to."""
    marks = f" {HOLM_MARK}" if comp.differs_holm else ""
    return marks + (f" {IMPLAUSIBLE_MARK}" if comp.implausible_gain else "")


def flagged_cost(comp: Estimate) -> str:
    """A cost with its interval (overhead_cell), ⚠ where the encrypted side came out better
    in a figure encryption only adds work to: for a column without a verdict beside it."""
    return overhead_cell(comp) + (f" {IMPLAUSIBLE_MARK}" if comp.implausible_gain else "")


def verdict_text(comp: Estimate) -> str:
    """A verdict as a table shows it: its words and its marks (verdict_marks)."""
    return comp.verdict + verdict_marks(comp)


def verdict_notes(comps: Iterable[Estimate | None], differences: Differences | None) -> list[str]:
    """The legend of the marks in a table's verdicts (verdict_text), under the table: † as
    soon as a verdict in it says a cell differs (so that a † missing is read too), ⚠ where it
    is used."""
    found = [c for c in comps if c is not None]
    notes = []
    if differences is not None and any(
        c.kind in ("cost", "gain") and c.differs_holm is not None for c in found
    ):
        notes.append(
            f"{HOLM_MARK} after a verdict: the cell still differs after Holm's adjustment for "
            f"the {differences.cells} cells of this study; a difference without it may be one "
            f"of the {differences.by_chance:.1f} expected by chance alone."
        )
    if any(c.implausible_gain for c in found):
        notes.append(
            f"{IMPLAUSIBLE_MARK}: the encrypted side came out better in a figure encryption "
            "only adds work to, so the difference is not encryption's: see the summary."
        )
    return notes


def cost_verdict(cell: TableCell, metric: str, primary: bool = True) -> tuple[str, str, str]:
    """A row's cost with its interval, its verdict (with its marks: verdict_text) and the
    verdict's style; a cell without the estimate says why in the primary metric's verdict
    column and "–" elsewhere."""
    comp = cell.comparisons.get(metric)
    if comp is None:
        return "–", cell.status if primary else "–", "na"
    return overhead_cell(comp), verdict_text(comp), comp.kind


def rounds_text(cell: TableCell) -> str:
    """ "14", or "14 (2 again)" when rounds were measured again for other load."""
    return f"{cell.rounds}" + (f" ({cell.rounds_rejected} again)" if cell.rounds_rejected else "")


def mean_text(s: Sample | None, digits: int = 1) -> str:
    return f"{s.mean:,.{digits}f}" if s is not None else "–"


def means_text(plain: Sample | None, encrypted: Sample | None, digits: int = 1) -> str:
    """Both variants' means, "plain / encrypted"."""
    return f"{mean_text(plain, digits)} / {mean_text(encrypted, digits)}"
