"""A new kind measured by the at-rest study's own runner: the toy kind
(tests/servers/test_new_kind.py) comes in through one door, a KindCells in the study's
`other_kinds` (its section of the profile, its cells, its side), and the real runner
(studies/at_rest/study.py) driven by the real engine measures its cells into the study's one
record type, summary, section and comparison — without a line of the study naming it.  Its
side is a fake pair of servers (a unit test's), whose client's rate falls by the encryption
cost it is given and whose proof reads the device each run says it ran on."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from encbench import studies
from encbench.commands import plan, rendering
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner, estimated_seconds
from encbench.engine.study import Run
from encbench.errors import ProofError
from encbench.profiles import profile as profiles
from encbench.profiles.options import Rounds, Threads
from encbench.profiles.profile import Profile
from encbench.report import markdown
from encbench.results.store import ResultStore
from encbench.studies import at_rest
from encbench.studies.at_rest.records import CellKey, RunRecord
from encbench.studies.at_rest.side import SideContext
from encbench.studies.definition import KindCells, Settings, StudyDefinition, measures
from tests.helpers import with_further_kind
from tests.servers.test_new_kind import TOY_KIND

COST = {"cost": 0.10}  # what encryption takes of the rate, in the next run


class ToyAtRestOptions(Rounds):
    """The toy kind's section of the profile: its clients."""

    clients: Threads = Field(default_factory=lambda: [1, 2])


def toy_options(profile: Profile) -> ToyAtRestOptions:
    return profile.section("toy_at_rest", ToyAtRestOptions)


def toy_cells(profile: Profile) -> list[CellKey]:
    if not measures(profile, "at-rest", TOY_KIND.name):
        return []
    return [
        CellKey("point_reads", "in-memory", n, layer="fs", kind=TOY_KIND.name)
        for n in toy_options(profile).clients
    ]


class ToySide:
    """A ToyDB pair as the study sees one: set up and torn down, a client run against one
    side, the device its server said it ran on."""

    together = False
    started: ClassVar[list[str]] = []  # what each side did, in order, across the test

    def __init__(self, context: SideContext) -> None:
        self.store = context.store

    def prepare(self) -> None:
        self.started.append("prepare")

    @contextlib.contextmanager
    def setup(self, todo: Sequence[CellKey]) -> Iterator[None]:
        self.started.append(f"up {len(todo)}")
        try:
            yield
        finally:
            self.started.append("down")

    @contextlib.contextmanager
    def open_cell(self, cell: CellKey) -> Iterator[None]:
        yield

    def renew(self, cell: CellKey) -> bool:
        return False

    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None:
        pass

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None:
        raise AssertionError("never together")

    def measure(self, run: Run) -> RunRecord:
        encrypted = run.variant == "encrypted"
        noise = 1 + 0.004 * (run.round % 3 - 1)
        tps = 1000.0 * run.cell.threads * (1 - COST["cost"] if encrypted else 1) * noise
        transactions = round(tps * run.seconds)
        run.raw.write_text(f"{transactions} transactions\n")
        return RunRecord(
            **run.record_fields("2026-12-08T00:00:00+00:00", float(run.seconds)),
            tps=tps,
            qps=None,
            transactions=transactions,
            ignored_errors=0,
            reconnects=0,
            latency_avg_ms=1000 / tps,
            latency_p95_ms=None,
            latency_max_ms=None,
            server_cpu_s=0.5,
            cpu_ms_per_txn=500 / transactions,
            bp_read_requests=None,
            bp_reads=None,
            pages_read=None,
            pages_written=None,
            raw_output=str(run.raw.relative_to(self.store.path)),
            harness_cpu_s=0.0,
            other_cpu_s=0.0,
            steal_s=0.0,
            device=f"/dev/toy-{run.variant}",
        )

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]:
        raise AssertionError("never together")

    def prove(self, record: RunRecord) -> None:
        if record.device != f"/dev/toy-{record.variant}":
            raise ProofError(f"{record.cell.label}: on {record.device}")


TOY_CELLS = KindCells(
    study="at-rest",
    kind=TOY_KIND.name,
    name="toy-at-rest",
    settings=Settings(key="toy_at_rest", model=ToyAtRestOptions, rule=toy_options),
    cells_of=toy_cells,
    side=ToySide,
)


@pytest.fixture
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[StudyDefinition]:
    """The toy kind registered, and the at-rest study with its KindCells: the one door."""
    with with_further_kind(monkeypatch, at_rest.STUDY, TOY_CELLS, TOY_KIND) as study:
        yield study


TOML = (
    'name = "t"\nstudies = ["at-rest"]\n[server]\nkinds = ["toy"]\n'
    "[toy_at_rest]\nclients = [1, 2]\nwarmup_s = 0\nrun_s = 1\nmin_rounds = 6\n"
    "max_rounds = 8\ninterference_max_pct = 100\n"
)


def test_its_cells_are_planned_as_the_studys_own(toy_kind: StudyDefinition) -> None:
    prof = profiles.parse(TOML, "t.toml")
    assert toy_kind.kinds_in(prof) == ["toy"]
    assert [c.label for c in toy_kind.cells(prof)] == [
        "in-memory point_reads 1 cl",
        "in-memory point_reads 2 cl",
    ]
    cells = [line for line in plan.lines(prof) if line.startswith("  cell ")]
    assert len(cells) == 2 and all("point_reads" in line for line in cells)
    assert toy_kind.rule(prof).for_cell(toy_kind.cells(prof)[0]).min_rounds == 6
    assert "toyd" in {c.name for c in toy_kind.machine_needs(prof)}


def test_the_studys_runner_measures_it_into_the_studys_records_report_and_comparison(
    toy_kind: StudyDefinition, tmp_path: Path
) -> None:
    prof = profiles.parse(TOML, "t.toml")
    summaries = []
    for k, cost in enumerate((0.10, 0.30)):
        COST["cost"] = cost
        ToySide.started.clear()
        store = ResultStore.create(tmp_path / f"r{k}", "t", TOML)
        runners = studies.build_studies(store, prof, RunProgress(estimated_seconds([])))
        assert [r.name for r in runners] == ["at-rest"]  # the study's one runner
        run = Runner(store, RunProgress(1.0), documents=lambda final: None, rng=random.Random(k))
        run.run(runners)
        assert run.complete and ToySide.started == ["prepare", "up 2", "down"]
        lines = (tmp_path / f"r{k}" / "at-rest.jsonl").read_text().splitlines()
        written = [json.loads(line) for line in lines]
        assert {w["cell"]["kind"] for w in written} == {"toy"}
        assert all("bp_reads" in w and w["bp_reads"] is None for w in written)
        summary = rendering.build_summary(store, prof)
        part = summary.part("at-rest")
        assert [c.kind for c in part.cells] == ["toy", "toy"]
        for cell in part.cells:
            assert cell.rounds >= 6
            assert cell.comparisons["tps"].overhead_pct == pytest.approx(100 * cost, abs=2)
            assert cell.variants is not None and cell.variants.plain.hit_ratio is None
        text = markdown.render(rendering.document(summary))
        assert "## ToyDB at rest: what encryption costs" in text
        assert "### ToyDB, in-memory" in text and "| point_reads | 2 |" in text
        summaries.append(summary)
    out = rendering.compare(summaries[0], summaries[1], "A", "B")
    (group,) = out.groups
    assert group.study == "at-rest" and len(group.cells) == 2
    assert group.cells[0].metrics["tps"].change_pp == pytest.approx(20, abs=3)
