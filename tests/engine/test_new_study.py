"""A new study comes in through the same door as the six: one StudyDefinition beside them in
the list of studies, and nothing else.  A toy study — its own options section, cells,
records, summary model and a plot — gets a plan, a report with its plot, and `compare`
without a line of the shared code naming it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from encbench import studies
from encbench.commands import plan, rendering
from encbench.engine.machine_needs import Here
from encbench.engine.study import Study
from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from encbench.profiles.options import Rounds
from encbench.profiles.profile import Profile
from encbench.report import cells as shared_cells
from encbench.report import html, markdown, plots
from encbench.report.models import Differences, Estimate, Harness, Model, Pair, Record, Sample
from encbench.report.parts import Compared, Context, ReportPart
from encbench.report.tables import Paragraph, Plot, Section
from encbench.results.schema import Metric
from encbench.results.store import ResultStore
from encbench.studies.definition import Settings, StudyDefinition


# -- the toy study's own package, as it would be written --------------------------------------
class ToyOptions(Rounds):
    sizes: list[int] = [1, 2]  # noqa: RUF012 - pydantic copies it per profile


def toy_options(profile: Profile) -> ToyOptions:
    return profile.section("toy", ToyOptions)


@dataclass(frozen=True)
class ToyCell:
    size: int

    @property
    def label(self) -> str:
        return f"toy size {self.size}"

    @property
    def slug(self) -> str:
        return f"toy-{self.size}"


@dataclass(frozen=True)
class ToyRecord:
    STUDY: ClassVar[str] = "toy"
    SCHEMA: ClassVar[int] = 1
    METRICS: ClassVar[tuple[Metric, ...]] = (
        Metric("time_s", "s", "lower_is_better", primary=True, more_less=("longer", "shorter")),
    )
    cell: ToyCell
    round: int
    variant: str
    position: int
    wall_s: float
    time_s: float
    interference_pct: float = 0.0
    other_cpu_s: float = 0.0
    steal_s: float = 0.0
    harness_cpu_s: float = 0.0

    def timed_window_s(self) -> float:
        # What the report's shares of the machine are set against (RecordedRun's: wall_s).
        return self.wall_s

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToyRecord:
        fields = {k: v for k, v in data.items() if k != "schema"}
        return cls(**{**fields, "cell": ToyCell(**fields["cell"])})


class ToyVariant(Model):
    time_s: Sample


class ToyCellSummary(Model):
    size: int
    label: str
    rounds: int
    rounds_rejected: int
    measured_s: float
    status: str
    variants: Pair[ToyVariant] | None = None
    comparisons: dict[str, Estimate] = {}  # noqa: RUF012 - pydantic copies it per cell
    other_load_pct_of_core: float | None = None


class ToySummary(Model):
    target_halfwidth_pct: float
    harness: Harness
    cells: list[ToyCellSummary]
    differences: Differences | None = None


def toy_cells(profile: Profile) -> list[ToyCell]:
    return [ToyCell(n) for n in toy_options(profile).sizes]


def build(store: ResultStore, profile: Profile, environment: Record | None) -> ToySummary:
    rule = toy_options(profile)
    runs = store.runs(ToyRecord)
    summaries, differences = shared_cells.summarize_cells(
        toy_cells(profile),
        runs,
        rule,
        "time_s",
        lambda cell, state: shared_cells.summarize_cell(
            ToyCellSummary,
            {"size": cell.size, "label": cell.label},
            state,
            rule,
            ToyRecord.METRICS,
            lambda rs: ToyVariant(time_s=shared_cells.sample(rs, lambda r: r.time_s)),
        ),
    )
    return ToySummary(
        target_halfwidth_pct=rule.target_halfwidth_pct,
        harness=shared_cells.harness_share(runs, 2),
        cells=summaries,
        differences=differences,
    )


def sections(part: ToySummary, context: Context) -> list[Section]:
    measured = [c for c in part.cells if c.comparisons]
    svg = lambda: plots.cost_rows_svg(  # noqa: E731 - the plot is drawn only for HTML
        [c.label for c in measured],
        [("time", [c.comparisons["time_s"] for c in measured])],
        "Toy: cost of encryption",
        "toy-cost",
    )
    return [Section("Toy study", [Paragraph("Toy cells."), Plot(svg, "the toy's cost")])]


def compared(part: ToySummary) -> list[Compared]:
    return [
        Compared(("toy", c.size), "toy", "size", c.label, c.label, 0, c.rounds, c.comparisons)
        for c in part.cells
        if c.rounds
    ]


def no_runtime(given: object) -> Study:
    raise AssertionError("plan, report and compare never build the study")


TOY = StudyDefinition(
    words="toy",
    setup_words="nothing at all",
    variants=("plain toy", "encrypted toy"),
    record=ToyRecord,
    make=no_runtime,
    settings=Settings(key="toy", model=ToyOptions, rule=toy_options),
    cells_of=toy_cells,
    here=Here(
        disk_bytes=lambda profile: 0,
        memory_mb=lambda profile: (0, "nothing"),
    ),
    report=ReportPart(
        model=ToySummary,
        build=build,
        sections=sections,
        compared=compared,
        compare_metrics={"time_s": "Time added by encryption"},
    ),
)


# -- registered through the one list ----------------------------------------------------------
@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = studies.STUDIES
    monkeypatch.setattr(studies, "STUDIES", (*before, TOY))
    profiles.register_studies(studies.STUDIES)
    yield
    profiles.register_studies(before)


TOML = 'name = "toy"\nstudies = ["toy"]\n[toy]\nsizes = [1, 2, 4]\n'


def _runs(store: ResultStore, cost: float, seed: int, sizes: tuple[int, ...]) -> None:
    rng = random.Random(seed)
    for size in sizes:
        for rnd in range(12):
            order = ("plain", "encrypted") if rnd % 2 == 0 else ("encrypted", "plain")
            for position, variant in enumerate(order):
                t = size * (1 + cost if variant == "encrypted" else 1) * rng.uniform(0.98, 1.02)
                store.append(ToyRecord(ToyCell(size), rnd, variant, position, t + 0.1, t))


def test_a_new_study_has_a_plan_a_report_with_its_plot_and_a_comparison(
    toy_registered: None, tmp_path: Path
) -> None:
    prof = profiles.parse(TOML, "toy.toml")
    assert toy_options(prof).sizes == [1, 2, 4]
    text = "\n".join(plan.lines(prof))
    assert "toy: nothing at all; plain toy against encrypted toy" in text
    assert "  cell toy size 4" in text and "3 cells" in text

    summaries = []
    for k, cost in enumerate((0.10, 0.30)):
        store = ResultStore.create(tmp_path / f"r{k}", "toy", TOML)
        _runs(store, cost, k, (1, 2) if k else (1, 2, 4))
        summary = rendering.build_summary(store, prof)
        assert summary.part("toy").cells[0].comparisons["time_s"].overhead_pct > 5
        page = html.render(rendering.document(summary))
        assert 'aria-label="Toy: cost of encryption, per row"' in page
        assert "## Toy study" in markdown.render(rendering.document(summary))
        # summary.json reads back as the toy's own model.
        again = rendering.read_summary(summary.to_json(), "toy")
        assert isinstance(again.part("toy"), ToySummary)
        summaries.append(summary)

    out = rendering.compare(summaries[0], summaries[1], "A", "B")
    (group,) = out.groups
    assert group.study == "toy" and [c.label for c in group.cells][:2] == [
        "toy size 1",
        "toy size 2",
    ]
    assert group.cells[0].metrics["time_s"].change_pp == pytest.approx(20, abs=3)
    assert out.only_in_a == ["toy size 4"]


def test_without_its_registration_a_profile_naming_it_is_refused() -> None:
    with pytest.raises(BadInput, match="studies"):
        profiles.parse(TOML, "toy.toml")
