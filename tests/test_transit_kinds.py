"""The in-transit study over any kind: `[server] kinds` (or a target) chooses MariaDB's or
PostgreSQL's cells, one kind a run; profiles written for the former pg-in-transit study read
as this one's; the report part says each kind's version."""

from __future__ import annotations

import pytest

from encbench import plan, studies
from encbench import profile as profiles
from encbench.errors import BadInput
from encbench.report.documents import as_named_now
from encbench.studies import in_transit
from encbench.studies.in_transit import report
from encbench.studies.in_transit.models import InTransitSummary
from encbench.studies.in_transit.postgresql.records import PgTransitCell
from encbench.studies.in_transit.records import TransitCell
from tests.test_pg_transit import pg_part

PG = 'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'


def test_server_kinds_chooses_which_kinds_cells_the_study_measures() -> None:
    maria = profiles.parse('name = "t"\nstudies = ["in-transit"]\n', "t")
    pg = profiles.parse(PG, "t")
    assert in_transit.STUDY.kinds_in(maria) == ["mariadb"]
    assert in_transit.STUDY.kinds_in(pg) == ["postgresql"]
    assert all(isinstance(c, TransitCell) for c in in_transit.STUDY.settings.cells(maria))
    pg_cells = in_transit.STUDY.settings.cells(pg)
    assert pg_cells and all(isinstance(c, PgTransitCell) for c in pg_cells)
    needed = {c.name for c in in_transit.STUDY.machine_needs(pg)}
    assert "openssl" in needed and not {"mariadb", "sysbench"} & needed


def test_the_builtin_postgresql_profiles_keep_their_cells() -> None:
    counts = {"postgresql-tiny": 8, "postgresql-distance": 24, "postgresql": 22}
    for name, count in counts.items():
        prof, _ = profiles.load(name)
        [transit] = [p for p in plan.study_plans(prof) if p.study.name == "in-transit"]
        assert len(transit.cells) == count, name


def test_a_profile_written_for_pg_in_transit_reads_as_in_transit_of_postgresql() -> None:
    before = profiles.parse(
        'name = "t"\nstudies = ["pg-in-transit"]\n[pg_transit]\nquery_clients = [2]\n', "t"
    )
    now = profiles.parse(PG + "[transit.postgresql]\nquery_clients = [2]\n", "t")
    assert before.studies == ["in-transit"] and before.server.kinds == ["postgresql"]
    assert in_transit.STUDY.settings.cells(before) == in_transit.STUDY.settings.cells(now)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["mariadb", "postgresql"]\n',
            "one kind of server a run",
        ),
        ('name = "t"\nstudies = ["in-transit", "pg-in-transit"]\n', "keep one"),
        (PG + "[transit.postgresql]\nscale = 2\n[pg_transit]\nscale = 3\n", r"keep \[transit\."),
        (PG + 'install = "mysql"\n', "remove server.install"),
    ],
)
def test_what_one_run_of_one_kind_cannot_be_is_refused_in_one_line(text: str, words: str) -> None:
    with pytest.raises(BadInput, match=words) as refused:
        profiles.parse(text, "t")
    assert "\n" not in str(refused.value)


def test_a_calibration_of_postgresql_in_transit_is_refused() -> None:
    with pytest.raises(BadInput, match="no A/A calibration of PostgreSQL"):
        profiles.parse('name = "t"\ncalibration = true\n' + PG.split("\n", 1)[1], "t")


def test_a_postgresql_target_needs_a_postgresql_profile() -> None:
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


def test_the_part_names_the_version_of_each_kind_it_measured() -> None:
    pg = pg_part()
    alone = InTransitSummary(target_halfwidth_pct=2.0, harness=pg.harness, postgresql=pg)
    setup = report.setup(alone)
    assert setup.kinds_measured(in_transit.STUDY.kinds) == ["postgresql"]
    assert setup.version_of("postgresql", in_transit.STUDY.kinds) == ("15.14", None)
    assert report.compare_setup(alone) == {"PostgreSQL": "15.14"}
    assert [c.key[0] for c in report.compared(alone)] == ["pg-in-transit"] * len(pg.cells)


def test_a_summary_part_written_under_pg_in_transit_reads_as_this_studys() -> None:
    pg = pg_part().model_dump(mode="json")
    before = {
        "studies": {"pg-in-transit": pg},
        "servers": {"pg-in-transit": {"kind": "postgresql", "name": "PostgreSQL"}},
        "not_measured": {},
    }
    now = as_named_now(before, studies.STUDIES)
    assert set(now["studies"]) == {"in-transit"} and set(now["servers"]) == {"in-transit"}
    part = InTransitSummary.model_validate(now["studies"]["in-transit"])
    assert part.postgresql is not None and not part.measured_mariadb
