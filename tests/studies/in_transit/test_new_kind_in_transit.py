"""A new kind measured by the in-transit study's own runner: the toy kind
(tests/servers/test_new_kind.py) comes in through one door, a KindCells in the study's
`other_kinds` (its section of the profile, its cells, its side), and the real runner
(studies/in_transit/study.py) driven by the real engine measures its cells beside none of
MariaDB's, into the study's one record type, summary, section and comparison — without a
line of the study naming it.  Its side is a fake server (a unit test's), whose client's
rate falls by the encryption cost it is given and whose proof counts its handshakes."""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import Field

from encbench import studies
from encbench.commands import plan, rendering
from encbench.engine.clocks import Clocks, Window
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner, estimated_seconds
from encbench.engine.study import Run
from encbench.errors import ProofError
from encbench.profiles import profile as profiles
from encbench.profiles.profile import Profile
from encbench.report import markdown
from encbench.results.schema import Usage
from encbench.results.store import ResultStore
from encbench.studies import in_transit
from encbench.studies.definition import KindCells, Settings, StudyDefinition, measures
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.side import ClientRun, RunProof, SideContext
from encbench.studies.in_transit.transit_rounds import TransitRounds
from tests.helpers import with_further_kind
from tests.servers.test_new_kind import TOY_KIND

COST = {"cost": 0.10}  # what encryption takes of the rate, in the next run


class ToyTransitOptions(TransitRounds):
    """The toy kind's section of the profile: its clients."""

    clients: Annotated[list[int], Field(min_length=1, default_factory=lambda: [1, 2])]


def toy_options(profile: Profile) -> ToyTransitOptions:
    return profile.section("toy_transit", ToyTransitOptions)


def toy_cells(profile: Profile) -> list[TransitCell]:
    if not measures(profile, "in-transit", TOY_KIND.name):
        return []
    return [
        TransitCell("connect", "tls", "rsa2048", "", 0.0, n, kind=TOY_KIND.name)
        for n in toy_options(profile).clients
    ]


class ToySide:
    """A ToyDB server as the study sees one: set up and torn down, a cell's two routes
    opened, a client run over one, the handshakes its server counted."""

    started: ClassVar[list[str]] = []  # what each side did, in order, across the test

    def __init__(self, context: SideContext) -> None:
        self.book = context.book
        self.handshakes = 0

    @contextlib.contextmanager
    def setup(self, hosts: Any, todo: Sequence[TransitCell]) -> Iterator[None]:
        self.started.append(f"up {len(todo)}")
        self.book.data["toy_version"] = "1.2.3"
        self.book.save()
        try:
            yield
        finally:
            self.started.append("down")

    @contextlib.contextmanager
    def open_cell(self, cell: TransitCell) -> Iterator[dict[str, str]]:
        self.book.data["proofs"][cell.slug] = {"plain": "plain", "encrypted": "ToyTLS 1.0"}
        self.book.save()
        yield {"plain": "tcp", "encrypted": "toytls"}

    def warm_up(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> None:
        pass

    def before_run(self, run: Run) -> int:
        return self.handshakes

    def clocks(self, start: Clocks | None = None) -> Clocks:
        return Clocks.read(os.getpid(), start.pids if start else None, server_cpu_s=lambda: 0.5)

    def run_client(self, run: Run) -> ClientRun:
        encrypted = run.variant == "encrypted"
        noise = 1 + 0.004 * (run.round % 3 - 1)
        rate = 1000.0 * run.cell.threads * (1 - COST["cost"] if encrypted else 1) * noise
        events = round(rate * run.seconds)
        self.handshakes += events if encrypted else 0
        run.raw.write_text(f"{events} connections\n")
        return ClientRun(events, rate, 0, 1000 / rate, None, 0)

    def after_run(self, run: Run, got: ClientRun, before: int) -> RunProof:
        return RunProof(tls_handshakes=self.handshakes - before)

    def reads_server_cpu(self) -> bool:
        return True

    def usage(self, cell: TransitCell, window: Window, read_bytes: int) -> Usage:
        return window.usage(window.server_cpu_s)

    def prove(self, record: TransitRecord) -> None:
        expected = record.events if record.variant == "encrypted" else 0
        if record.tls_handshakes != expected:
            raise ProofError(f"{record.cell.label}: {record.tls_handshakes} handshakes")


TOY_CELLS = KindCells(
    study="in-transit",
    kind=TOY_KIND.name,
    name="toy-in-transit",
    settings=Settings(key="toy_transit", model=ToyTransitOptions, rule=toy_options),
    cells_of=toy_cells,
    side=ToySide,
)


@pytest.fixture
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[StudyDefinition]:
    """The toy kind registered, and the in-transit study with its KindCells: the one door."""
    with with_further_kind(monkeypatch, in_transit.STUDY, TOY_CELLS, TOY_KIND) as study:
        yield study


TOML = (
    'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["toy"]\n'
    "[toy_transit]\nclients = [1, 2]\nwarmup_s = 0\nrun_s = 1\nmin_rounds = 6\n"
    "max_rounds = 8\ninterference_max_pct = 100\n"
)


def test_its_cells_are_planned_as_the_studys_own(toy_kind: StudyDefinition) -> None:
    prof = profiles.parse(TOML, "t.toml")
    assert toy_kind.kinds_in(prof) == ["toy"]
    assert [c.label for c in toy_kind.cells(prof)] == [
        "connect rsa2048 1 cl",
        "connect rsa2048 2 cl",
    ]
    cells = [line for line in plan.lines(prof) if line.startswith("  cell ")]
    assert len(cells) == 2 and all("connect" in line for line in cells)
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
        assert [r.name for r in runners] == ["in-transit"]  # the study's one runner
        run = Runner(store, RunProgress(1.0), documents=lambda final: None, rng=random.Random(k))
        run.run(runners)
        assert run.complete and ToySide.started == ["up 2", "down"]
        lines = (tmp_path / f"r{k}" / "in-transit.jsonl").read_text().splitlines()
        written = [json.loads(line) for line in lines]
        assert {w["cell"]["kind"] for w in written} == {"toy"}
        record = json.loads((tmp_path / f"r{k}" / "in-transit.json").read_text())
        assert record["toy"]["toy_version"] == "1.2.3" and len(record["toy"]["proofs"]) == 2
        summary = rendering.build_summary(store, prof)
        part = summary.part("in-transit")
        assert [c.kind for c in part.cells] == ["toy", "toy"]
        for cell in part.cells:
            assert cell.rounds >= 6
            assert cell.comparisons["rate"].overhead_pct == pytest.approx(100 * cost, abs=2)
        text = markdown.render(rendering.document(summary))
        assert "### toy: Connection setup" in text
        summaries.append(summary)
    out = rendering.compare(summaries[0], summaries[1], "A", "B")
    (group,) = out.groups
    assert group.study == "in-transit" and len(group.cells) == 2
    assert group.cells[0].metrics["rate"].change_pp == pytest.approx(20, abs=3)
