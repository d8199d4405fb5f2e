"""encbench installs like a tool (`uv tool install .`, `pipx install .`): its wheel holds every
file of the package — the profiles, the sysbench Lua scripts, the C sources it builds at run
time, the summary's JSON Schema — and the `encbench` command.  Built here with the build
backend itself (hatchling, a dev dependency), so no network is needed."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO

ROOT = REPO
PACKAGE = ROOT / "encbench"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("encbench-*.whl")
    return zipfile.ZipFile(built)


def package_files() -> set[str]:
    """Every file of the package as the source tree has it, bytecode left out."""
    return {
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def test_the_wheel_holds_every_file_of_the_package(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = package_files() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    # Not only Python: what encbench reads at run time ships too.
    for suffix in (".toml", ".lua", ".c", ".json"):
        assert any(n.endswith(suffix) for n in names), suffix
    assert "encbench/report/summary.schema.json" in names


def test_the_wheel_installs_the_encbench_command(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"encbench": "encbench.__main__:entry"}
    assert "[console_scripts]" in text and "encbench = encbench.__main__:entry" in text


def test_the_wheel_requires_what_the_project_depends_on(wheel: zipfile.ZipFile) -> None:
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    text = wheel.read(metadata).decode()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dependency in project["dependencies"]:
        assert f"Requires-Dist: {dependency}" in text
    assert f"Requires-Python: {project['requires-python']}" in text


def test_the_command_the_wheel_names_is_the_cli() -> None:
    import ast

    import click

    import encbench
    from encbench.cli import main

    # Read, not imported: importing encbench.__main__ puts its stop handlers in place, which
    # this test process must not take on.
    source = (Path(encbench.__file__).parent / "__main__.py").read_text()
    (entry,) = (
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == "entry"
    )
    assert isinstance(main, click.Group)
    assert "from encbench.cli import main" in ast.unparse(entry)
