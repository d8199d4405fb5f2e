"""Output paths are checked before any work, a write that fails is one line, and the
estimate checks its target before it measures or keeps anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from encbench import cli
from encbench.errors import BadInput
from encbench.estimate import command, units
from encbench.results import outputs
from tests import estimate_helpers, estimate_runs

UNREACHABLE = "mysql://u@127.0.0.1:1/"  # loopback, a port nothing listens on


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args))


def assert_one_line(result: Result, status: int, *fragments: str) -> str:
    assert result.exit_code == status, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


# -- the checks themselves -----------------------------------------------------------------


def test_a_new_file_needs_its_folder_and_no_directory_or_file_in_its_place(tmp_path: Path) -> None:
    outputs.check_new_file(tmp_path / "v.json", "--json")
    with pytest.raises(BadInput, match="does not exist; create it"):
        outputs.check_new_file(tmp_path / "missing" / "v.json", "--json")
    with pytest.raises(BadInput, match="is a directory: give a file name"):
        outputs.check_new_file(tmp_path, "--json")
    (tmp_path / "taken.json").write_text("{}")
    with pytest.raises(BadInput, match="exists: choose another --json"):
        outputs.check_new_file(tmp_path / "taken.json", "--json")
    (tmp_path / "plain").write_text("")
    with pytest.raises(BadInput, match="is not a directory"):
        outputs.check_new_file(tmp_path / "plain" / "v.json", "--json")


def test_a_new_directory_may_lack_parents_but_not_be_a_file(tmp_path: Path) -> None:
    outputs.check_new_directory(tmp_path / "a" / "b", "--out")
    (tmp_path / "f").write_text("")
    with pytest.raises(BadInput, match="is a file, not a directory"):
        outputs.check_new_directory(tmp_path / "f", "--out")
    with pytest.raises(BadInput, match="is not a directory"):
        outputs.check_new_directory(tmp_path / "f" / "below", "--out")


def test_a_write_that_fails_is_one_line_and_a_failure_not_bad_input(tmp_path: Path) -> None:
    with pytest.raises(outputs.WriteFailed, match=r"cannot write .*gone/v\.json") as caught:
        outputs.write_text(tmp_path / "gone" / "v.json", "{}")
    assert caught.value.exit_code == 1


# -- the commands --------------------------------------------------------------------------


def test_crypto_refuses_a_json_path_before_it_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench import capacity

    def never(**_: object) -> None:
        raise AssertionError("measured before the --json path was checked")

    monkeypatch.setattr(capacity, "measure_capacity", never)
    assert_one_line(
        invoke("crypto", "--json", "/missing/x.json"), 2, "--json /missing/x.json", "mkdir -p"
    )


def test_validate_refuses_a_json_path_in_a_missing_folder(tmp_path: Path) -> None:
    directory = estimate_runs.directory(tmp_path / "r")
    result = invoke("estimate", "--validate", str(directory), "--json", "/missing/dir/v.json")
    assert_one_line(result, 2, "/missing/dir", "does not exist")


def test_compare_refuses_an_out_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    result = invoke("compare", str(tmp_path), str(tmp_path), "--out", str(tmp_path / "f" / "c"))
    assert result.exit_code == 2


def test_run_refuses_an_out_that_is_a_file_before_anything(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert_one_line(invoke("run", "smoke", "--out", str(tmp_path / "f")), 2, "is a file")


def test_an_estimate_without_units_names_the_one_command(state_dir: Path) -> None:
    line = assert_one_line(invoke("estimate", "--target", UNREACHABLE), 2, "no unit costs")
    assert "`encbench estimate --measure-units`" in line and "--units-from" not in line


def test_units_are_not_kept_when_the_target_cannot_be_reached(
    tmp_path: Path, state_dir: Path
) -> None:
    directory = estimate_runs.directory(tmp_path / "r")
    result = invoke("estimate", "--units-from", str(directory), "--target", UNREACHABLE)
    assert_one_line(result, 2, "127.0.0.1")
    assert not units.machine_file().exists()


def test_measure_units_checks_the_target_before_it_measures(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def never(*_: object, **__: object) -> None:
        raise AssertionError("measured before the target was checked")

    monkeypatch.setattr(cli, "_run", never)
    result = invoke("estimate", "--measure-units", "--target", UNREACHABLE)
    assert_one_line(result, 2, "check the target's host and port")
    assert not (tmp_path / "results").exists()


def test_a_failure_after_units_were_kept_is_status_1(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = estimate_runs.directory(tmp_path / "r")
    monkeypatch.setattr(command, "check_target", lambda options, log: None)

    def refused(*_: object) -> None:
        raise BadInput("the server went away")

    monkeypatch.setattr(command, "estimate_target", refused)
    result = invoke("estimate", "--units-from", str(directory), "--target", "mysql://u@db/")
    assert result.exit_code == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "encbench: the server went away"
    assert units.machine_file().exists()


def test_the_target_check_reads_the_counters_over_one_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from encbench.servers.mariadb import estimate as mariadb_part

    asked: list[str] = []

    class Session:
        def status(self) -> dict[str, str]:
            asked.append("status")
            return {}

        def grants(self) -> list[str]:
            asked.append("grants")
            return ["GRANT USAGE ON *.* TO `u`@`%`"]

    class Opened:
        def __enter__(self) -> Session:
            return Session()

        def __exit__(self, *_: object) -> None:
            return None

    monkeypatch.setattr(mariadb_part, "session", lambda spec: Opened())
    options = command.Options(target="mysql://u@db/")
    with pytest.raises(BadInput, match="GRANT PROCESS"):
        command.check_target(options, lambda m: None)
    assert asked == ["status", "grants"]


def test_stored_units_make_the_target_check_the_first_refusal(state_dir: Path) -> None:
    units.write_machine(estimate_helpers.typical())
    result = invoke("estimate", "--target", UNREACHABLE)
    assert_one_line(result, 2, "127.0.0.1")
    assert json.loads(units.machine_file().read_text())["units"]
