"""A new kind's cells come into a study of several kinds through one door: a KindPart in the
study's `parts`, and nothing else.  The toy kind (tests/servers/test_new_kind.py) measured by the
in-transit study as a toy part (the toy study's cells, records and report,
tests/engine/test_new_study.py) gets its cells in the study's plan beside MariaDB's, each named
by its kind, its runner run by the engine on fakes, its part of the report, and `compare`,
without a line of the shared code or of the in-transit study naming it."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from encbench import studies
from encbench.commands import plan, rendering
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner, estimated_seconds
from encbench.engine.study import Run
from encbench.engine.study_base import Given
from encbench.profiles import profile as profiles
from encbench.report import markdown
from encbench.results.schema import Metric
from encbench.results.store import ResultStore
from encbench.servers import server_kind
from encbench.servers.server_kind import KINDS
from encbench.studies import in_transit
from encbench.studies.definition import KindPart, Settings, StudyDefinition
from tests.engine.test_new_study import TOY, ToyCell, ToyOptions, ToyRecord, toy_cells, toy_options
from tests.servers.test_new_kind import TOY_KIND


# -- the toy part's runner: what the engine drives (engine/study.py), here on fakes ---------------
@dataclasses.dataclass
class ToyRunner:
    given: Given  # its rule and cells, as the part's definition read them
    cost: float  # what encryption adds to each run's time
    name: str = ToyRecord.STUDY
    record_type: type[Any] = ToyRecord
    together: bool = False

    @property
    def rule(self) -> ToyOptions:
        rule: ToyOptions = self.given.rule
        return rule

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return ToyRecord.METRICS

    def cells(self) -> Sequence[ToyCell]:
        return self.given.cells

    def prepare(self) -> None:
        pass

    def setup(self, todo: Sequence[Any]) -> AbstractContextManager[object]:
        return nullcontext()

    def open_cell(self, cell: Any) -> AbstractContextManager[object]:
        return nullcontext()

    def warm_up(self, cell: Any, variant: str, seconds: int, raw: Path) -> None:
        pass

    def measure(self, run: Run) -> ToyRecord:
        noise = 1 + 0.005 * (run.round % 3 - 1)
        t = run.cell.size * (1 + self.cost if run.variant == "encrypted" else 1) * noise
        return ToyRecord(run.cell, run.round, run.variant, run.position, t + 0.1, t)

    def prove(self, record: Any) -> None:
        pass


COST = {"cost": 0.10}  # what the next runner built measures


def make(given: Given) -> ToyRunner:
    return ToyRunner(given, COST["cost"])


TOY_PART = KindPart(
    study=in_transit.STUDY.name,
    kind=TOY_KIND.name,
    words="ToyDB in-transit",
    record=ToyRecord,
    make=make,
    settings=Settings(key="toy", model=ToyOptions, rule=toy_options),
    cells_of=toy_cells,
    report=TOY.report,
)


# -- registered through the study's one door: its parts -------------------------------------------
@pytest.fixture
def toy_part(monkeypatch: pytest.MonkeyPatch) -> Iterator[StudyDefinition]:
    server_kind.register_kinds((*KINDS, TOY_KIND))
    study = dataclasses.replace(in_transit.STUDY, parts=(*in_transit.STUDY.parts, TOY_PART))
    before = studies.STUDIES
    monkeypatch.setattr(
        studies, "STUDIES", tuple(study if s is in_transit.STUDY else s for s in before)
    )
    profiles.register_studies(studies.STUDIES)
    yield study
    profiles.register_studies(before)
    server_kind.register_kinds(KINDS)


def _toml(kinds: str) -> str:
    return (
        f'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = [{kinds}]\n'
        "[toy]\nsizes = [1, 2]\nmin_rounds = 6\nmax_rounds = 12\nwarmup_s = 1\n"
    )


def test_its_cells_are_planned_beside_mariadbs_each_named_by_its_kind(
    toy_part: StudyDefinition,
) -> None:
    prof = profiles.parse(_toml('"mariadb", "toy"'), "t.toml")
    assert toy_part.kinds_in(prof) == ["mariadb", "toy"]
    cells = [line for line in plan.lines(prof) if line.startswith("  cell ")]
    labels = [line.split(" (its own budget")[0] for line in cells]
    assert labels[-2:] == ["  cell ToyDB: toy size 1", "  cell ToyDB: toy size 2"]
    assert cells[0].startswith("  cell MariaDB: ")
    # Its cells run by its own section's rounds, the study's others by [transit]'s.
    rule = toy_part.rule(prof)
    assert rule.for_cell(ToyCell(1)).min_rounds == 6
    assert rule.min_rounds == in_transit.transit_options(prof).min_rounds
    assert "toyd" in {c.name for c in toy_part.machine_needs(prof)}  # its kind's tools


def test_a_run_of_it_alone_on_fakes_has_its_report_and_a_comparison(
    toy_part: StudyDefinition, tmp_path: Path
) -> None:
    text = _toml('"toy"')
    prof = profiles.parse(text, "t.toml")
    assert [c.label for c in toy_part.cells(prof)] == ["toy size 1", "toy size 2"]
    summaries = []
    for k, cost in enumerate((0.10, 0.30)):
        COST["cost"] = cost
        store = ResultStore.create(tmp_path / f"r{k}", "t", text)
        runners = studies.build_studies(store, prof, RunProgress(estimated_seconds([])))
        assert [r.name for r in runners] == ["toy"]  # MariaDB's runner is not built
        progress = RunProgress(estimated_seconds([]))
        run = Runner(store, progress, documents=lambda final: None, rng=random.Random(k))
        run.run(runners)
        assert run.complete and (tmp_path / f"r{k}" / "toy.jsonl").exists()
        summary = rendering.build_summary(store, prof)
        part = summary.part("toy")
        assert part.cells[0].comparisons["time_s"].overhead_pct == pytest.approx(100 * cost, abs=2)
        assert "## Toy study" in markdown.render(rendering.document(summary))
        summaries.append(summary)
    out = rendering.compare(summaries[0], summaries[1], "A", "B")
    (group,) = out.groups
    assert group.study == "toy"
    assert group.cells[0].metrics["time_s"].change_pp == pytest.approx(20, abs=3)


def test_without_the_part_a_profile_naming_its_kind_measures_nothing_of_it() -> None:
    server_kind.register_kinds((*KINDS, TOY_KIND))
    try:
        toml = 'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["mariadb", "toy"]\n'
        prof = profiles.parse(toml, "t.toml")
        assert in_transit.STUDY.kinds_in(prof) == ["mariadb"]
        assert not any("toy" in line for line in plan.lines(prof))
    finally:
        server_kind.register_kinds(KINDS)
