"""`--threads`, `--time`, `--tables`, `--table-size`: the profile's settings in sysbench's
words, written into the profile text the results directory keeps, and recorded in meta.json
with what they replaced."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from encbench import cli
from encbench.commands import overrides
from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from tests.helpers import encbench_here


def given(**options: str) -> dict[str, str | None]:
    """The command line's options as the CLI hands them over (table_size → table-size)."""
    return {name.replace("_", "-"): value for name, value in options.items()}


def applied(name: str, **options: str) -> tuple[profiles.Profile, str, list[overrides.Override]]:
    prof, text = profiles.load(name)
    return overrides.apply(text, prof, given(**options), name)


def test_threads_and_time_land_in_every_study_that_runs_sysbench_with_them() -> None:
    prof, _, changed = applied("quick", threads="1,8,64", time="3")
    assert prof.measure.threads == [1, 8, 64]
    assert prof.transit.query_threads == [1, 8, 64]
    assert prof.measure.run_s == prof.transit.run_s == 3
    # state transfer times whole transfers and sizes its own data: untouched.
    quick, _ = profiles.load("quick")
    assert prof.state_transfer == quick.state_transfer
    assert {(o.key, json.dumps(o.before), json.dumps(o.after)) for o in changed} == {
        ("measure.threads", json.dumps(quick.measure.threads), "[1, 8, 64]"),
        ("transit.query_threads", json.dumps(quick.transit.query_threads), "[1, 8, 64]"),
        ("measure.run_s", str(quick.measure.run_s), "3"),
        ("transit.run_s", str(quick.transit.run_s), "3"),
    }


def test_threads_and_time_reach_postgresqls_clients_at_rest_and_in_transit() -> None:
    """A profile of PostgreSQL alone: pgbench's clients and runs, in both studies' sections."""
    from encbench.studies.at_rest import pg_at_rest_options
    from encbench.studies.in_transit.options import pg_transit_options

    prof, _, changed = applied("postgresql", threads="2,8", time="4")
    assert pg_at_rest_options(prof).clients == [2, 8]
    assert pg_transit_options(prof).query_clients == [2, 8]
    assert pg_at_rest_options(prof).run_s == pg_transit_options(prof).run_s == 4
    assert {o.key for o in changed} == {
        "pg_at_rest.clients",
        "pg_at_rest.run_s",
        "pg_transit.query_clients",
        "pg_transit.run_s",
    }


def test_threads_reach_every_kind_a_study_of_two_kinds_measures() -> None:
    """at-rest-servers measures MariaDB and PostgreSQL at rest: both kinds' clients."""
    from encbench.studies.at_rest import pg_at_rest_options

    prof, _, changed = applied("at-rest-servers", threads="3")
    assert prof.measure.threads == [3]
    assert pg_at_rest_options(prof).clients == [3]
    assert {o.key for o in changed} == {"measure.threads", "pg_at_rest.clients"}


def test_the_text_keeps_the_profiles_comments_and_says_what_the_option_replaced() -> None:
    _, original = profiles.load("quick")
    _, text, _ = applied("quick", threads="2")
    comments = [line for line in original.splitlines() if line.startswith("#")]
    assert all(line in text.splitlines() for line in comments)
    (line,) = [line for line in text.splitlines() if line.startswith("threads =")]
    assert line.startswith("threads = [2]") and "--threads; the profile had [1, 4, 16, 64]" in line
    assert profiles.parse(text, "again") == applied("quick", threads="2")[0]


def test_tables_and_their_size_set_data_and_a_section_left_out_is_added(tmp_path: Path) -> None:
    path = tmp_path / "bare.toml"
    path.write_text('name = "bare"\n')
    prof, text, changed = overrides.apply(
        path.read_text(),
        profiles.load(str(path))[0],
        given(tables="3", table_size="5000", threads="2", time="4"),
        str(path),
    )
    assert (prof.data.tables, prof.data.table_size) == (3, 5000)
    assert (prof.measure.threads, prof.measure.run_s) == ([2], 4)
    raw = tomllib.loads(text)
    assert raw["data"] == {"tables": 3, "table_size": 5000}
    # From the defaults, since the profile left them out.
    before = {o.key: o.before for o in changed}
    assert before["data.tables"] == profiles.Profile(name="x").data.tables


@pytest.mark.parametrize(
    "layout",
    ["measure.threads = [1]\nmeasure.run_s = 2\n", "measure = {threads = [1], run_s = 2}\n"],
)
def test_dotted_keys_and_inline_tables_are_written_in_place(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(f'name = "p"\n{layout}')
    prof, _, _ = overrides.apply(
        path.read_text(), profiles.load(str(path))[0], given(threads="4,8"), str(path)
    )
    assert prof.measure.threads == [4, 8] and prof.measure.run_s == 2


def test_a_profile_whose_studies_run_no_sysbench_threads_refuses_the_option() -> None:
    with pytest.raises(BadInput, match=r"--threads: no study of profile operations"):
        applied("operations", threads="4")


def test_no_option_leaves_the_text_as_it_was() -> None:
    prof, text = profiles.load("smoke")
    assert overrides.apply(text, prof, given(), "smoke") == (prof, text, [])


def test_a_new_run_keeps_the_options_in_profile_toml_and_meta_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What this machine could run is not the question here: every study runs.
    monkeypatch.setattr(cli, "_what_runs_here", lambda prof, out: (prof, {}))
    store, prof = cli._open_store(
        "smoke", tmp_path / "out", None, False, sysbench=given(threads="2,6", table_size="3000")
    )
    store.unlock()
    kept = profiles.parse((store.path / "profile.toml").read_text(), "kept")
    assert kept == prof and kept.measure.threads == [2, 6] and kept.data.table_size == 3000
    smoke, _ = profiles.load("smoke")
    meta = json.loads((store.path / "meta.json").read_text())
    assert meta["overrides"] == [
        {"option": "--threads", "key": "measure.threads", "from": smoke.measure.threads,
         "to": [2, 6]},
        {"option": "--table-size", "key": "data.table_size", "from": smoke.data.table_size,
         "to": 3000},
    ]  # fmt: skip


def test_plan_prints_what_the_options_set() -> None:
    result = encbench_here("plan", "smoke", "--threads", "3", "--time", "2")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[:2]
    assert first[0].startswith("set: measure.threads = [3] (--threads; the profile had")
    assert first[1].startswith("set: measure.run_s = 2 (--time; the profile had")
    assert "6 cells" not in result.stdout  # one thread count × two regimes
    assert "2 cells" in result.stdout
