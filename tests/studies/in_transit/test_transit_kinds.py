"""The in-transit study over any kind: `[server] kinds` (or a target) chooses MariaDB's cells,
PostgreSQL's (`[pg_transit]`) or both, measured by one runner into one record type and one
part of summary.json; profiles written for the former pg-in-transit study read as this
one's on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench import studies
from encbench.commands import plan
from encbench.engine.progress import RunProgress
from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from encbench.results.store import ResultStore
from encbench.studies import in_transit
from encbench.studies.in_transit import report as pg_report
from encbench.studies.in_transit.records import TransitCell
from encbench.studies.in_transit.study import TransitStudy
from tests.studies.in_transit.test_pg_transit import pg_part

PG = 'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'
BOTH = 'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["mariadb", "postgresql"]\n'
PART = in_transit.POSTGRESQL


def test_server_kinds_chooses_which_kinds_cells_the_study_measures() -> None:
    maria = profiles.parse('name = "t"\nstudies = ["in-transit"]\n', "t")
    pg = profiles.parse(PG, "t")
    assert in_transit.STUDY.kinds_in(maria) == ["mariadb"]
    assert in_transit.STUDY.kinds_in(pg) == ["postgresql"]
    assert all(isinstance(c, TransitCell) for c in in_transit.STUDY.cells(maria))
    pg_cells = in_transit.STUDY.cells(pg)
    assert pg_cells and {c.kind for c in pg_cells} == {"postgresql"}
    assert in_transit.STUDY.listed_in(pg) == "in-transit"
    needed = {c.name for c in in_transit.STUDY.machine_needs(pg)}
    assert "openssl" in needed and not {"mariadb", "sysbench"} & needed


def test_both_kinds_are_measured_in_one_run_each_cell_by_its_own_sections_rule(
    tmp_path: Path,
) -> None:
    both = profiles.parse(
        BOTH + "[transit]\ncell_budget_s = 20\n[pg_transit]\ncell_budget_s = 50\n", "t"
    )
    found = in_transit.STUDY.cells(both)
    kinds = [c.kind for c in found]
    assert kinds == sorted(kinds) and set(kinds) == {"mariadb", "postgresql"}
    rule = in_transit.STUDY.rule(both)
    assert {rule.for_cell(c).cell_budget_s for c in found} == {20, 50}
    store = ResultStore.create(tmp_path / "out", "t", "")
    [runner] = studies.build_studies(store, both, RunProgress(1.0))
    assert type(runner) is TransitStudy and list(runner.cells()) == found
    memory = in_transit.STUDY.here.memory_mb
    alone = [memory(profiles.parse(t, "t"))[0] for t in (PG, 'name = "t"\n')]
    assert memory(both)[0] == max(alone)


def test_the_builtin_postgresql_profiles_keep_their_cells() -> None:
    counts = {"postgresql-tiny": 8, "postgresql-distance": 24, "postgresql": 22}
    for name, count in counts.items():
        prof, _ = profiles.load(name)
        [transit] = [p for p in plan.study_plans(prof) if p.study.name == "in-transit"]
        assert len(transit.cells) == count, name


@pytest.mark.parametrize(
    ("studies_line", "kinds"),
    [
        ('["pg-in-transit"]', ["postgresql"]),
        ('["in-transit", "pg-in-transit"]', ["mariadb", "postgresql"]),
    ],
)
def test_a_profile_written_for_pg_in_transit_reads_as_in_transit_on_postgresql(
    studies_line: str, kinds: list[str]
) -> None:
    before = profiles.parse(
        f'name = "t"\nstudies = {studies_line}\n[pg_transit]\nquery_clients = [2]\n', "t"
    )
    assert before.studies == ["in-transit"] and before.server.kinds == kinds
    now = profiles.parse(PG + "[pg_transit]\nquery_clients = [2]\n", "t")
    assert PART.cells_of(before) == PART.cells_of(now)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (PG + 'install = "mysql"\n', "remove server.install"),
        ('name = "t"\ncalibration = true\n' + PG.split("\n", 1)[1], "no A/A calibration yet"),
    ],
)
def test_what_the_postgresql_cells_cannot_be_is_refused_in_one_line(text: str, words: str) -> None:
    with pytest.raises(BadInput, match=words) as refused:
        profiles.parse(text, "t")
    assert "\n" not in str(refused.value)


def test_a_postgresql_target_is_measured_by_the_postgresql_part() -> None:
    with pytest.raises(BadInput, match="give a mysql://"):
        profiles.parse(
            'name = "t"\nstudies = ["in-transit"]\n[target]\nkind = "postgresql"\n'
            'host = "db"\nuser = "u"\n',
            "t",
        )
    prof = profiles.parse(PG + '[target]\nkind = "postgresql"\nhost = "db"\nuser = "u"\n', "t")
    assert [s.name for s in studies.named(prof) if studies.measures_target(s, prof)] == [
        "in-transit"
    ]
    assert in_transit.STUDY.listed_in(prof) == "in-transit"
    assert in_transit.STUDY.target_use(prof) is PART.target
    assert in_transit.STUDY.target_kinds(prof) == ["postgresql"]


def test_the_study_names_postgresqls_version_and_keys_its_cells_by_kind() -> None:
    pg = pg_part()
    [measured] = pg_report.PART.setup(pg).kinds
    assert (measured.kind, measured.version) == ("postgresql", "15.14")
    compared = pg_report.PART.compared(pg)
    assert {(c.key[0], c.key[8]) for c in compared} == {("in-transit", "postgresql")}
