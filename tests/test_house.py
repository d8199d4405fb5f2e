"""The house's rules, read from the code's own imports: a study is read only through its face
(its package's `__init__.py`: its STUDY and what it publishes), no study imports another,
and a server kind is asked, not named, outside its own module."""

from __future__ import annotations

import ast
import graphlib
import re
from collections.abc import Iterator
from pathlib import Path

import encbench
from encbench.servers import server_kind

ROOT = Path(encbench.__file__).parent
STUDIES = ROOT / "studies"


def _imports(path: Path) -> Iterator[str]:
    """Every module a file imports (absolute names; `from a import b` gives a and a.b)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _study_packages() -> list[str]:
    return sorted(p.parent.name for p in STUDIES.glob("*/__init__.py"))


def _internal(name: str) -> bool:
    """encbench.studies.<package>.<module>: a module below a study's face."""
    parts = name.split(".")
    if parts[:2] != ["encbench", "studies"] or len(parts) < 4:
        return False
    below = STUDIES / parts[2] / parts[3]
    return below.is_dir() or below.with_suffix(".py").exists()


def test_nothing_outside_studies_imports_a_studys_internals() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in ROOT.rglob("*.py")
        if STUDIES not in path.parents
        for name in _imports(path)
        if _internal(name)
    ]
    assert found == []


def test_no_study_imports_another() -> None:
    found = []
    for package in _study_packages():
        for path in (STUDIES / package).rglob("*.py"):
            for name in _imports(path):
                parts = name.split(".")
                other = parts[2] if parts[:2] == ["encbench", "studies"] and len(parts) > 2 else ""
                if other in _study_packages() and other != package:
                    found.append(f"{path.relative_to(ROOT)}: {name}")
    assert found == []


def test_only_a_kinds_own_module_compares_a_kind_by_name() -> None:
    # `spec.kind == "postgresql"` outside the kind's package (servers/<kind>/) is a question
    # the kind should answer.
    found = []
    asks = re.compile(r"""\b(kind|server)\s*[!=]=\s*["'](mariadb|postgresql)["']""")
    packages = [ROOT / "servers" / name for name in server_kind.names()]
    for path in ROOT.rglob("*.py"):
        if any(package in path.parents for package in packages):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if asks.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def _module_name(path: Path) -> str:
    parts = ("encbench", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _encbench_imports(path: Path, known: set[str]) -> set[str]:
    """The encbench modules a file imports: at its top, in a function, or for the type
    checker alone (a circle drawn through `if TYPE_CHECKING:` is still a circle to a reader)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found & known


def test_no_import_cycles() -> None:
    """No module imports one that imports it back: the house has a low and a high side
    (kinds' facts below the parser and the sandbox registry, their ways above the target
    modules), not a circle held together by a late import."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {name: _encbench_imports(path, set(files)) - {name} for name, path in files.items()}
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as circle:
        raise AssertionError(f"an import circle: {' -> '.join(circle.args[1])}") from None


def _room(module: str) -> str:
    """The room a module stands in: its folder under encbench/, or the top itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (ROOT / parts[-1]).is_dir() else "(top)"


def test_rooms_import_downward_only() -> None:
    """Folders as rooms: no room imports one that imports it back, so the house has floors
    (docs/developing.md draws them) and no import runs back up."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    rooms: dict[str, set[str]] = {}
    for name, path in files.items():
        mine = _room(name)
        if mine == "(top)":
            continue  # the CLI above all, and what every room uses below all
        below = {_room(m) for m in _encbench_imports(path, set(files))} - {mine, "(top)"}
        rooms.setdefault(mine, set()).update(below)
    try:
        list(graphlib.TopologicalSorter(rooms).static_order())
    except graphlib.CycleError as circle:
        raise AssertionError(f"rooms in a circle: {' -> '.join(circle.args[1])}") from None


def test_the_top_holds_the_command_line_and_what_every_room_uses() -> None:
    loose = sorted(p.stem for p in ROOT.glob("*.py"))
    assert loose == [
        "__init__",
        "__main__",
        "cli",
        "errors",
        "proc",
        "state",
        "stats",
        "stopping",
    ]


def test_what_studies_share_stands_below_them() -> None:
    # studies/ holds the study packages, their list (__init__.py) and the interface each
    # fills (definition.py); a part two studies share goes below, where any may import it
    # (engine/study_base.py, report/parts.py), not beside them as if it were a study.
    loose = sorted(p.name for p in STUDIES.glob("*.py"))
    assert loose == ["__init__.py", "definition.py"]


def test_no_study_imports_a_part_that_reads_studies() -> None:
    """Importing any of `encbench.studies` first runs its `__init__.py`, which imports every
    study: a module outside studies/ that imports it stands above them all, and a study that
    imported such a module would meet it half-read (an import circle the module graph does
    not show, since it counts `encbench.studies.definition` apart from its package)."""
    readers = {
        path
        for path in ROOT.rglob("*.py")
        if STUDIES not in path.parents
        and any(
            n == "encbench.studies" or n.startswith("encbench.studies.") for n in _imports(path)
        )
    }
    names = {_module_name(p) for p in readers}
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in STUDIES.rglob("*.py")
        for name in _imports(path)
        if name in names
    ]
    assert found == []


def test_the_tests_mirror_the_house() -> None:
    """A test file stands in the folder of what it tests (tests/report/ for encbench/report/);
    integration/ (real servers, across rooms) and benchmarks/ (the benchmarks' own checks)
    aside, and at the top only what tests the command line or the whole house."""
    tests = Path(__file__).resolve().parent
    folders = {
        p.parent.relative_to(tests)
        for p in tests.rglob("test_*.py")
        if p.parent != tests and p.parent.relative_to(tests).parts[0] not in NOT_ROOMS
    }
    assert [str(f) for f in sorted(folders) if not (ROOT / f).is_dir()] == []
    assert len(list(tests.glob("test_*.py"))) <= 15


NOT_ROOMS = ("integration", "benchmarks")
