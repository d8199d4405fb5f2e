"""encbench_key_management without a server: its key file, its build command, and the
refusals where it cannot be built (the build and a rotation on a real server:
tests/integration/test_key_plugin.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

import encbench.studies.operations as operations_study
from encbench import proc
from encbench.errors import BadInput
from encbench.profiles.profile import parse
from encbench.servers import keys
from encbench.servers.keys import redact
from encbench.servers.mariadb import keyplugin
from encbench.studies.operations.servers import VERSION_STEP, key_versions_needed


def test_the_versioned_key_file_holds_every_version_each_its_own_secret_key(
    tmp_path: Path,
) -> None:
    path = keys.versioned_key_file(tmp_path, 7)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert [line.split(";")[:2] for line in lines] == [["1", str(v)] for v in range(1, 8)]
    hexes = [line.split(";")[2] for line in lines]
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in hexes)
    assert len(set(hexes)) == 7
    # a resumed run keeps a file with enough versions, and makes a longer one when not
    assert keys.versioned_key_file(tmp_path, 5).read_text().splitlines() == lines
    assert len(keys.versioned_key_file(tmp_path, 9).read_text().splitlines()) == 9
    with pytest.raises(ValueError):
        keys.versioned_key_file(tmp_path, 0, "none.keys")


def test_every_round_can_rotate_two_versions_up() -> None:
    # version 1 to start, one rotation per round, rounds measured again included
    assert VERSION_STEP == 2
    assert key_versions_needed(40) == 1 + 2 * 42


def test_the_build_command_compiles_a_shared_plugin_against_the_server_headers() -> None:
    argv = keyplugin.build_command("/usr/bin/cc", Path("s.c"), Path("out/p.so"), Path("/h"))
    assert argv[0] == "/usr/bin/cc"
    assert {"-shared", "-fPIC", "-DMYSQL_DYNAMIC_PLUGIN", "-I/h", "-I/h/private"} <= set(argv)
    assert argv[argv.index("-o") + 1] == "out/p.so" and argv[-1] == "s.c"
    # the source ships in the package, where build() reads it
    assert "maria_declare_plugin(encbench_key_management)" in keyplugin.source_text()


def test_the_plugins_options_load_it_from_its_own_directory_with_the_key_path_redacted() -> None:
    opts = keyplugin.options(Path("/run/plugins"), Path("/run/private/rotation.keys"), "AES_CTR")
    assert opts["plugin_dir"] == "/run/plugins"
    assert opts["plugin_load_add"] == "encbench_key_management"  # a name, never a path
    assert opts["encbench_key_management_version"] == "1"
    assert redact(opts)["encbench_key_management_filename"] == "<key file in private/>"


def test_no_compiler_or_no_headers_is_one_line_naming_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proc, "which", lambda name: None)
    assert "apt-get install gcc" in (keyplugin.problem() or "")
    with pytest.raises(BadInput, match="needs a C compiler") as caught:
        keyplugin.build(tmp_path / "plugins", "10.11")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "plugins").exists()
    monkeypatch.setattr(proc, "which", lambda name: f"/usr/bin/{name}")
    why = keyplugin.problem(tmp_path / "no-headers")
    assert why is not None and "apt-get install libmariadbd-dev" in why


def test_a_profile_with_key_rotation_is_refused_up_front_without_a_compiler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    profile = parse(
        'name = "r"\nstudies = ["operations"]\n[operations]\noperations = ["key-rotation"]\n',
        "r.toml",
    )
    monkeypatch.setattr(
        keyplugin, "problem", lambda headers=keyplugin.HEADERS: "needs X, none: apt-get install gcc"
    )
    (check,) = operations_study.needs(profile)
    assert not check.ok and check.fix == "apt-get install gcc"
    assert "key rotation" in check.name
    without = parse('name = "r"\nstudies = ["operations"]\n', "r.toml")
    assert operations_study.needs(without) == []
