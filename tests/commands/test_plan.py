"""`encbench plan`: every study's cells, its rounds and budget, and the run's time estimate,
for every built-in profile; nothing is started."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from encbench import cli, studies
from encbench.commands import plan
from encbench.profiles import profile as profiles
from encbench.profiles.durations import RUN_OVERHEAD_S
from encbench.profiles.profile import load, parse


def _plan(name: str) -> str:
    result = CliRunner().invoke(cli.main, ["plan", name])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(
    "name", ["quick", "percona-2017-sst", "galera-replication", "operations", "smoke-replication"]
)
def test_plan_lists_the_cells_of_every_study_of_the_profile_and_a_time(name: str) -> None:
    profile, _ = load(name)
    text = _plan(name)
    for study in studies.named(profile):
        assert f"{study.name}: " in text
        lines = text.splitlines()
        for cell in study.cells(profile):
            # A cell with a budget of its own says so after its label.
            assert any(
                line == f"  cell {cell.label}" or line.startswith(f"  cell {cell.label} (its own")
                for line in lines
            ), cell.label
    measured = [p for p in plan.study_plans(profile) if not p.left_out]
    cells_s = sum(p.measuring_s for p in measured)
    loading = sum(p.setup_s for p in measured)
    head = text.splitlines()[0]
    assert f"about {plan.duration(cells_s)} of measuring" in head
    assert (f" and {plan.duration(loading)} of loading servers" in head) == (loading > 0)
    assert "0 at-rest cells" not in text


def test_a_cell_runs_until_its_budget_or_its_maximum_rounds_whichever_comes_first() -> None:
    budget = parse('name = "p"\n[measure]\nrun_s = 1\nwarmup_s = 2\ncell_budget_s = 80\n', "p")
    assert plan.cell_seconds(budget.measure) == 80 + 2 * 2
    # 12 rounds of two 3 s runs (and their overhead each) end before a 600 s budget.
    short = parse(
        'name = "p"\n[measure]\nrun_s = 3\nwarmup_s = 0\nmax_rounds = 12\ncell_budget_s = 600\n',
        "p",
    )
    assert plan.cell_seconds(short.measure) == pytest.approx(12 * 2 * (3 + RUN_OVERHEAD_S))


def test_a_cell_across_a_distance_is_planned_at_its_fewest_rounds() -> None:
    profile, _ = load("percona-2013-ssl")
    (transit,) = plan.study_plans(profile)
    rule = transit.study.rule(profile)
    far = 12 * 2 * (rule.run_s + RUN_OVERHEAD_S) + 2 * rule.warmup_s
    near = rule.cell_budget_s + 2 * rule.warmup_s
    # 8 loopback cells end at their 60 s budget; the 16 at 40 and 170 ms at 12 rounds.
    assert sorted(set(transit.cells_s)) == pytest.approx(sorted({far, near}))
    assert transit.cells_s.count(near) == 8 and len(transit.cells_s) == 24


def test_the_quick_plan_adds_each_cells_budget_and_warm_ups() -> None:
    profile, _ = load("quick")
    plans = plan.study_plans(profile)
    assert [p.study.name for p in plans] == profile.studies
    # At rest 8 cells of an 80 s budget and 1 s warm-ups; in transit 2 of 30 s; one SST of
    # 130 s without warm-up: 850 s, the estimate a measured run of quick came within 3% of.
    assert [p.measuring_s for p in plans] == [8 * (80 + 2), 2 * (30 + 2), 130]
    # Beside them, loading the at-rest pair's rows (9 s per million rows per server).
    assert plans[0].setup_s == pytest.approx(2 * 4 * 100_000 / 1e6 * 9.0)
    assert [p.setup_s for p in plans[1:]] == [0.0, 0.0]
    assert plan.duration(850) == "14 min 10 s" and plan.duration(42) == "42 s"
    assert plan.duration(3720) == "1 h 2 min"


def test_doctor_names_what_each_study_of_the_profile_needs_and_fails_only_for_a_required_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from encbench.servers.mariadb import galera

    monkeypatch.setattr(galera, "provider", lambda: None)
    required = CliRunner().invoke(cli.main, ["doctor", "galera-replication"])
    assert required.exit_code == 1
    assert "MISSING  Galera provider (libgalera_smm.so): not found — for replication, fix: " in (
        required.output
    )
    # quick's state transfer is optional: named, not a failure.
    optional = CliRunner().invoke(cli.main, ["doctor", "quick"])
    assert "optional Galera provider (libgalera_smm.so): not found" in optional.output
    assert "MISSING  Galera" not in optional.output


def _as_a_user_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)


def test_without_root_plan_refuses_a_profile_that_needs_it_as_run_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _as_a_user_without_root(monkeypatch)
    planned = CliRunner().invoke(cli.main, ["plan", "percona-2017-sst"])
    ran = CliRunner().invoke(cli.main, ["run", "percona-2017-sst", "--out", str(tmp_path / "r")])
    assert planned.exit_code == ran.exit_code == 2
    line = planned.output.strip()
    assert len(line.splitlines()) == 1 and "root privileges" in line
    assert line == ran.output.strip()
    assert not (tmp_path / "r").exists()


def test_without_root_plan_names_an_optional_study_it_would_leave_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _as_a_user_without_root(monkeypatch)
    result = CliRunner().invoke(cli.main, ["plan", "quick"])
    assert result.exit_code == 0, result.output
    assert "state-transfer: left out here —" in result.output


def test_each_study_says_the_disk_memory_and_root_it_needs_here() -> None:
    text = _plan("quick")
    needs = [line for line in text.splitlines() if line.startswith("  needs here: ")]
    assert len(needs) == 3  # at rest, in transit, the SST
    assert all(
        re.search(r"about [\d.]+ GiB of disk .* about [\d,]+ MB of memory", n) for n in needs
    )
    assert needs[0].endswith("; no root")
    assert needs[2].endswith("root for network namespaces (without it: the SST left out)")


def test_a_study_whose_cells_have_budgets_of_their_own_names_them_in_its_header() -> None:
    text = _plan("percona-2017-sst")
    assert "its budget (180, 400 s: each cell's below)" in text
    assert "its 180 s budget" not in text


def test_each_study_of_the_plan_says_what_it_creates_on_this_host() -> None:
    profile, _ = load("quick")
    text = _plan("quick")
    for study in studies.named(profile):
        assert study.here.creates, study.name
        assert f"creates on this host: {study.here.creates}" in text


def test_mysqls_slower_restarts_are_in_its_at_rest_plan_and_nowhere_else() -> None:
    from encbench.profiles import durations
    from encbench.studies.at_rest.options import measure_options
    from encbench.studies.in_transit.options import transit_options

    mysql = profiles.parse(
        'name = "p"\nstudies = ["at-rest", "in-transit"]\n[server]\ninstall = "mysql"\n', "test"
    )
    assert measure_options(mysql).run_overhead_s == durations.MYSQL_RUN_OVERHEAD_S
    assert transit_options(mysql).run_overhead_s == durations.RUN_OVERHEAD_S
    system = profiles.parse('name = "p"\n', "test")
    assert measure_options(system).run_overhead_s == durations.RUN_OVERHEAD_S
    # for_cell's copy keeps it (a workload with a budget of its own).
    budgeted = profiles.parse(
        'name = "p"\n[server]\ninstall = "mysql"\n[measure]\nworkloads = ["oltp_point_select"]\n'
        "workload_budget_s = { oltp_point_select = 10 }\n",
        "test",
    )
    cell = SimpleNamespace(workload="oltp_point_select")
    copied = measure_options(budgeted).for_cell(cell)
    assert copied.cell_budget_s == 10
    assert copied.run_overhead_s == durations.MYSQL_RUN_OVERHEAD_S


@pytest.mark.parametrize("study", ["at-rest", "in-transit"])
def test_plan_of_a_study_over_both_kinds_names_each_cells_kind_and_of_one_kind_none(
    study: str, tmp_path: Path
) -> None:
    both = tmp_path / "both.toml"
    both.write_text(
        f'name = "both"\nstudies = ["{study}"]\n[server]\nkinds = ["mariadb", "postgresql"]\n'
    )
    profile, _ = load(str(both))
    (part,) = studies.named(profile)[0].kind_sections
    theirs = {c.label for c in part.cells_of(profile)}
    cells = [line for line in _plan(str(both)).splitlines() if line.startswith("  cell ")]
    assert any(line.startswith("  cell MariaDB: ") for line in cells)
    assert any(line.startswith("  cell PostgreSQL: ") for line in cells)
    for line in cells:
        kind, label = line.removeprefix("  cell ").split(": ", 1)
        label = label.split(" (its own budget")[0]
        assert (kind == "PostgreSQL") == (label in theirs), line
    one = tmp_path / "one.toml"
    one.write_text(f'name = "one"\nstudies = ["{study}"]\n[server]\nkinds = ["postgresql"]\n')
    alone = [line for line in _plan(str(one)).splitlines() if line.startswith("  cell ")]
    assert alone and not any("PostgreSQL: " in line for line in alone)


def test_plan_names_the_cells_a_run_would_leave_out_here_as_doctor_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from encbench.servers import postgresql

    assert "cells: left out here" not in _plan("quick")
    monkeypatch.setattr(postgresql, "bindir", lambda: None)  # no PostgreSQL here
    text = _plan("at-rest-servers")
    (line,) = [x for x in text.splitlines() if x.startswith("  its PostgreSQL cells: left out")]
    assert "PostgreSQL (initdb, postgres, pg_ctl, pgbench, psql) not found" in line, line
    assert "at-rest: left out" not in text  # MariaDB's cells are still measured
