"""The command line's edges: every refusal one line with its fix (click's usage errors too),
ranges said as ranges, `doctor PROFILE` only what PROFILE needs, status 2 only before
anything was created, and a target's databases that could not be dropped named with the
statement that drops them and dropped later by `encbench clean --target DSN`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from encbench import cli
from encbench.commands import clean_target
from encbench.errors import BadInput, Interrupted, ServerError
from encbench.profiles import profile as profiles
from encbench.results.store import ResultStore
from encbench.servers import dsn, leftovers, owned
from tests.helpers import tiny_profile


@pytest.fixture(autouse=True)
def _private_state(state_dir: Path) -> Path:
    """Every test here with its own state (the leftovers' records go there)."""
    return state_dir


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args))


def only_line(result: Result, status: int) -> str:
    assert result.exit_code == status, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- usage errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["plan", "quick", "--out", "X"],
            "encbench plan: no such option --out; see encbench plan --help",
        ),
        (
            ["profiles", "quick"],
            "encbench profiles: takes no argument (got quick); see encbench profiles --help",
        ),
        (
            ["schema", "foo"],
            "encbench schema: takes no argument (got foo); see encbench schema --help",
        ),
        (
            ["run", "--out"],
            "encbench run: option '--out' requires an argument; see encbench run --help",
        ),
        (["nosuch"], "encbench: no such command 'nosuch'; see encbench --help"),
    ],
)
def test_a_usage_error_is_one_line_with_where_to_read_more(args: list[str], line: str) -> None:
    assert only_line(invoke(*args), 2) == line


def test_a_near_miss_names_the_option_meant() -> None:
    assert "(did you mean --threads?)" in only_line(invoke("plan", "--thread", "2"), 2)


def test_the_usage_itself_is_only_on_help() -> None:
    result = invoke("plan", "--help")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: encbench plan")


# -- ranges and fixes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("port", "words"),
    [
        ("99999", "port 99999 is out of range 1–65535"),
        ("0", "port 0 is out of range 1–65535"),
        ("x1", "the port 'x1' is not a number"),
    ],
)
def test_a_dsn_port_says_its_range(port: str, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        dsn.parse_dsn(f"mysql://u@db:{port}/")


def test_a_missing_profile_file_says_what_to_give(tmp_path: Path) -> None:
    line = only_line(invoke("run", str(tmp_path / "p.toml")), 2)
    assert "does not exist" in line and "`encbench profiles` lists them" in line


def test_compare_of_an_empty_or_foreign_folder_names_the_fix(tmp_path: Path) -> None:
    assert "DIR_A is empty: give the results directory of a run" in only_line(
        invoke("compare", "", str(tmp_path)), 2
    )
    assert "no meta.json): give the directory a run wrote" in only_line(
        invoke("compare", str(tmp_path), str(tmp_path)), 2
    )


# -- doctor --------------------------------------------------------------------------------


def test_doctor_of_a_profile_lists_only_its_studies_needs() -> None:
    smoke = invoke("doctor", "smoke").output
    assert "at-rest (required):" in smoke.splitlines()
    for other in ("PostgreSQL", "sshd", "other studies"):
        assert other not in smoke, smoke
    everything = invoke("doctor").output
    assert "other studies and profiles (optional):" in everything


# -- status 2 only before anything was created ---------------------------------------------


def test_bad_input_after_the_results_directory_exists_is_status_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prof, text = profiles.load(str(tiny_profile(tmp_path / "p.toml")))
    store = ResultStore.create(tmp_path / "out", prof.name, text)

    def refused_inside(*_: object) -> None:
        raise BadInput("threads above the target's max_connections")

    monkeypatch.setattr(cli, "_open_store", lambda *a, **k: (store, prof))
    monkeypatch.setattr(cli, "_measure", refused_inside)
    result = invoke("run", "x")
    assert result.exit_code == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == "encbench: threads above the target's max_connections"


# -- what a run could not drop on the user's server ----------------------------------------


SPEC = dsn.parse_dsn("mysql://bench@db.example:3306/")


def target() -> profiles.TargetSpec:
    return profiles.TargetSpec.model_validate(SPEC)


def test_a_database_the_server_would_not_drop_is_named_and_recorded(tmp_path: Path) -> None:
    def gone() -> None:
        raise ServerError("target db.example:3306: Lost connection to server")

    words = leftovers.drop_or_record(target(), "encbench_abc_plain", "m", tmp_path, gone)
    assert words is not None
    assert "run `DROP DATABASE `encbench_abc_plain`;` there" in words
    assert "encbench clean --target DSN" in words and "Lost connection" in words
    [found] = leftovers.of_run(tmp_path)
    assert (found.database, found.address, found.marker) == (
        "encbench_abc_plain",
        "db.example:3306",
        "m",
    )
    # Dropped at a later try: the record goes.
    assert (
        leftovers.drop_or_record(target(), "encbench_abc_plain", "m", tmp_path, lambda: None)
        is None
    )
    assert leftovers.recorded() == []


def test_a_database_whose_drop_a_stop_cut_short_is_recorded(tmp_path: Path) -> None:
    def stopped() -> None:
        raise Interrupted("stopped by SIGINT; what was measured is kept")

    with pytest.raises(Interrupted):
        leftovers.drop_or_record(target(), "encbench_abc_plain", "m", tmp_path, stopped)
    [found] = leftovers.of_run(tmp_path)
    assert found.database == "encbench_abc_plain"


def test_table_sets_record_what_they_could_not_drop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from encbench.studies.at_rest import table_sets

    text = dsn.with_target(
        tiny_profile(tmp_path / "p.toml").read_text(), False, "mysql://bench@db.example:3306/",
        None, False,
    )  # fmt: skip
    prof = profiles.parse(text, "p.toml")
    store = ResultStore.create(tmp_path / "out", prof.name, text)
    sets = table_sets.TableSets(store, prof)
    sets.created = list(sets.names.values())

    def gone(*_: object) -> None:
        raise ServerError("target db.example:3306: Lost connection to server")

    monkeypatch.setattr(owned, "drop_owned", gone)
    sets.close()
    assert sorted(f.database for f in leftovers.of_run(store.path)) == sorted(sets.names.values())


def test_a_run_names_its_leftovers_before_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prof, text = profiles.load(str(tiny_profile(tmp_path / "p.toml")))
    store = ResultStore.create(tmp_path / "out", prof.name, text)

    def gone_mid_run(*_: object) -> None:
        leftovers.drop_or_record(target(), "encbench_k_plain", "m", store.path, gone)
        raise ServerError("target db.example:3306: Lost connection to server")

    def gone() -> None:
        raise ServerError("no answer")

    monkeypatch.setattr(cli, "_open_store", lambda *a, **k: (store, prof))
    monkeypatch.setattr(cli, "_measure", gone_mid_run)
    result = invoke("run", "x")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert "DROP DATABASE `encbench_k_plain`;" in lines[-2]
    assert "Lost connection to server" in lines[-1]


def test_a_finished_run_that_leaves_a_database_on_the_target_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prof, text = profiles.load(str(tiny_profile(tmp_path / "p.toml")))
    store = ResultStore.create(tmp_path / "out", prof.name, text)

    def gone() -> None:
        raise ServerError("no answer")

    def measured_but_not_dropped(*_: object) -> None:
        leftovers.drop_or_record(target(), "encbench_k_plain", "m", store.path, gone)

    monkeypatch.setattr(cli, "_open_store", lambda *a, **k: (store, prof))
    monkeypatch.setattr(cli, "_measure", measured_but_not_dropped)
    result = invoke("run", "x")
    assert result.exit_code == 1
    assert "DROP DATABASE `encbench_k_plain`;" in result.stderr
    assert result.stdout.strip() == str(store.path / "report.md")


def test_clean_target_drops_what_was_recorded_there_and_only_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for address, database in (
        ("db.example:3306", "encbench_a_plain"),
        ("other:3306", "encbench_b_plain"),
    ):
        leftovers.record(leftovers.Leftover("mariadb", address, database, "m", str(tmp_path)))
    dropped: list[str] = []
    monkeypatch.setattr(clean_target, "dropper", lambda spec: lambda f: dropped.append(f.database))
    result = invoke("clean", "--target", "mysql://bench@db.example:3306/")
    assert result.exit_code == 0, result.output
    assert (
        result.output.strip() == "dropped database encbench_a_plain on the target db.example:3306"
    )
    assert dropped == ["encbench_a_plain"]
    assert [f.database for f in leftovers.recorded()] == ["encbench_b_plain"]
    again = invoke("clean", "--target", "mysql://bench@db.example:3306/")
    assert again.output.strip() == "nothing recorded as left on the target db.example:3306"


def test_clean_target_keeps_what_it_still_cannot_drop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leftovers.record(leftovers.Leftover("postgresql", "db:5432", "encbench_a_pgtransit", "m", "r"))

    def still_gone(found: leftovers.Leftover) -> None:
        raise BadInput("target db:5432: connection refused")

    monkeypatch.setattr(clean_target, "dropper", lambda spec: still_gone)
    result = invoke("clean", "--target", "postgresql://bench@db:5432/")
    assert result.exit_code == 1
    assert 'run `DROP DATABASE "encbench_a_pgtransit";` there' in result.output
    assert len(leftovers.recorded()) == 1


def test_clean_target_takes_no_password_in_the_dsn() -> None:
    assert "the DSN holds a password" in only_line(
        invoke("clean", "--target", "mysql://u:secret@db/"), 2
    )


def test_a_foreign_database_of_the_runs_names_is_refused_before_the_directory_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from encbench.commands import preflight
    from encbench.servers.mariadb import readiness

    text = dsn.with_target(
        tiny_profile(tmp_path / "p.toml").read_text(), False, "mysql://bench@db.example:3306/",
        None, False,
    )  # fmt: skip
    prof = profiles.parse(text, "p.toml")
    out = tmp_path / "out"
    asked: list[str] = []

    def ownership(server: object, db: str, run_marker: str) -> str:
        asked.append(db)
        if db.endswith("_plain"):
            raise BadInput(f"database {db} exists on the target and is not this run's")
        return "absent"

    monkeypatch.setattr(readiness, "server_of", lambda spec: None)
    monkeypatch.setattr(owned, "ownership", ownership)
    with pytest.raises(BadInput, match="is not this run's"):
        preflight.check_own_names(prof, out)
    assert asked and all(
        db.startswith(f"encbench_{owned.run_key(str(out.absolute()))}") for db in asked
    )
    assert not out.exists()
