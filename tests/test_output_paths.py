"""Output paths are checked before the work that fills them, and a failed write is one line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from encbench import output_paths
from encbench.errors import BadInput
from tests.helpers import encbench


def test_a_new_file_in_an_existing_folder_passes(tmp_path: Path) -> None:
    output_paths.check_new(tmp_path / "x.json", "--json")


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("keep")
    with pytest.raises(BadInput, match="exists: choose another --json path"):
        output_paths.check_new(tmp_path / "x.json", "--json")


def test_a_missing_folder_names_the_folder_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"the folder .*nope does not exist; create it"):
        output_paths.check_new(tmp_path / "nope" / "x.json", "--json")


def test_a_write_that_fails_is_an_error_of_exit_status_1(tmp_path: Path) -> None:
    with pytest.raises(output_paths.WriteFailed, match="could not write") as caught:
        output_paths.write_text(tmp_path / "nope" / "x.json", "{}")
    assert caught.value.exit_code == 1


def test_crypto_refuses_a_json_path_it_cannot_write_before_measuring(tmp_path: Path) -> None:
    started = time.monotonic()
    result = encbench("crypto", "--json", str(tmp_path / "missing" / "x.json"))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "does not exist; create it" in result.stderr
    # openssl speed takes over a minute: a refusal this quick measured nothing.
    assert time.monotonic() - started < 20


def test_compare_checks_its_inputs_before_its_out_folder(tmp_path: Path) -> None:
    result = encbench("compare", str(tmp_path), str(tmp_path), "--out", str(tmp_path / "a" / "b"))
    assert result.returncode == 2
    # The inputs are refused first: neither is a results directory.
    assert "is not an encbench results directory" in result.stderr
