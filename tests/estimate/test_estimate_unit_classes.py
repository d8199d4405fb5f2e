"""`encbench estimate --prometheus URL --units-from LABEL=VALUE:FILE`: each instance estimated
with the units of its class (the instances whose LABEL is VALUE), this machine's otherwise,
and the output says which; bad input in one line.  Against the stub Prometheus of
tests/estimate/test_estimate_prometheus.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from encbench.estimate import prometheus, units
from encbench.results.store import write_json
from tests import estimate_helpers
from tests.estimate.test_estimate_prometheus import WEEK, Answer, fleet_answers, stub, vector
from tests.helpers import encbench_here
from tests.test_cli_bad_input import assert_one_line_error

__all__ = ["stub"]  # the fixture, used by name

Stub = tuple[str, list[tuple[str, dict[str, str]]], list[Answer]]
# db1 and db2 on hosts of two classes; db3 carries no class label.
CLASSES = {"db1:9104": "c5", "db2:9104": "m6", "db3:9104": None}


def units_file(path: Path, factor: float) -> Path:
    """A units file as --measure-units keeps it, each unit `factor` × the typical one."""
    found = {
        name: u.model_copy(
            update={"us": u.us * factor, "ci_us": (u.ci_us[0] * factor, u.ci_us[1] * factor)}
        )
        for name, u in estimate_helpers.typical().items()
    }
    write_json(
        path,
        {
            "schema": units.MACHINE_FILE_SCHEMA,
            "units": {n: u.model_dump(mode="json") for n, u in found.items()},
        },
    )
    return path


def replying(classes: dict[str, str | None], label: str = "host_class") -> Answer:
    """Every instance busy alike; the class query answered from `classes`."""
    by_query = {q.replace('job="mysql"', ""): n for n, q in prometheus.queries(WEEK).items()}
    values = fleet_answers("x", windows=2016, restarts=0)

    def reply(query: str, headers: dict[str, str]) -> tuple[int, object]:
        if query.startswith("max by (instance, "):
            return 200, vector(
                [({"instance": i, **({label: c} if c else {})}, 1.0) for i, c in classes.items()]
            )
        value = values.get(by_query.get(query, ""))
        return 200, vector([] if value is None else [({"instance": i}, value) for i in classes])

    return reply


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    units.write_machine(estimate_helpers.typical())
    return {"XDG_STATE_HOME": str(state)}


def _cores(instance: dict[str, object], key: str) -> float:
    causes = instance["mean"]["causes"]  # type: ignore[index]
    return float(next(c for c in causes if c["key"] == key)["cores"]["value"])


def test_each_instance_takes_its_class_units_and_says_so(
    stub: Stub, tmp_path: Path, machine: dict[str, str]
) -> None:
    url, asked, answer = stub
    answer[0] = replying(CLASSES)
    c5 = units_file(tmp_path / "units-c5.json", 2.0)
    m6 = units_file(tmp_path / "units-m6.json", 3.0)
    result = encbench_here(
        "estimate", "--prometheus", url, "--json", str(tmp_path / "fleet.json"),
        "--units-from", f"host_class=c5:{c5}", "--units-from", f"host_class=m6:{m6}",
        env=machine,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "fleet.json").read_text())
    by_name = {i["instance"]: i for i in data["instances"]}
    assert by_name["db1:9104"]["units_from"] == f"host_class=c5 ({c5})"
    assert by_name["db2:9104"]["units_from"] == f"host_class=m6 ({m6})"
    assert by_name["db3:9104"]["units_from"] == ""  # this machine's
    mine = _cores(by_name["db3:9104"], "table_reads")
    assert _cores(by_name["db1:9104"], "table_reads") == pytest.approx(2 * mine)
    assert _cores(by_name["db2:9104"], "table_reads") == pytest.approx(3 * mine)
    assert set(data["class_units"]) == {"host_class=c5", "host_class=m6"}
    # The Markdown says it per instance, and lists each class's units.
    row = next(line for line in result.stdout.splitlines() if "| db1:9104 |" in line)
    assert f"units of host_class=c5 ({c5})" in row
    row = next(line for line in result.stdout.splitlines() if "| db3:9104 |" in line)
    assert "units of" not in row
    assert "## The unit costs of host_class=m6" in result.stdout
    assert "the others' this machine's" in result.stdout
    # The class query is reduced in Prometheus too: one series per instance and value.
    assert any(q.startswith("max by (instance, host_class) (last_over_time(") for q, _ in asked)


def test_a_results_directory_is_a_class_units_too(
    stub: Stub, tmp_path: Path, machine: dict[str, str]
) -> None:
    from tests.estimate_runs import Truth, directory

    url, _, answer = stub
    answer[0] = replying({"db1:9104": "c5"})
    run = directory(tmp_path / "run", Truth(read_us=40.0))
    result = encbench_here(
        "estimate", "--prometheus", url, "--json", str(tmp_path / "fleet.json"),
        "--units-from", f"host_class=c5:{run}", env=machine,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "fleet.json").read_text())
    used = {u["name"]: u for u in data["class_units"]["host_class=c5"]}
    assert used["page_read"]["measured_us"] == pytest.approx(40.0, rel=0.1)


BadArgs = Callable[[Path], tuple[str, ...]]


def two(d: Path, second: str) -> tuple[str, ...]:
    """host_class=c5's units, then `second`'s (the same file)."""
    file = d / "c5.json"
    return ("--units-from", f"host_class=c5:{file}", "--units-from", f"{second}:{file}")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (lambda d: ("--units-from", f"host_class=c5:{d / 'none.json'}"), ("cannot read",)),
        (lambda d: ("--units-from", f"host_class=c5:{d / 'bad.json'}"), ("not a units file",)),
        (
            lambda d: ("--units-from", f"host_class=c9:{d / 'c5.json'}"),
            ("no instance in the window has host_class=c9", "c5, m6"),
        ),
        (
            lambda d: ("--units-from", f"rack=r1:{d / 'c5.json'}"),
            ("no instance in the window has rack=r1", "no instance has the label"),
        ),
        (lambda d: two(d, "rack=r1"), ("every class names one label",)),
        (lambda d: two(d, "host_class=c5"), ("given twice",)),
    ],
)
def test_bad_classes_are_one_line(
    stub: Stub,
    tmp_path: Path,
    machine: dict[str, str],
    args: BadArgs,
    fragments: tuple[str, ...],
) -> None:
    url, _, answer = stub
    answer[0] = replying(CLASSES)
    units_file(tmp_path / "c5.json", 2.0)
    (tmp_path / "bad.json").write_text('{"schema": 1, "units": {"page_read": {"us": "x"}}}')
    result = encbench_here("estimate", "--prometheus", url, *args(tmp_path), env=machine)
    assert_one_line_error(result, *fragments)


def test_a_class_needs_a_fleet(tmp_path: Path, machine: dict[str, str]) -> None:
    file = units_file(tmp_path / "c5.json", 2.0)
    result = encbench_here(
        "estimate", "--target", "mysql://u@h:1/", "--units-from", f"host_class=c5:{file}",
        env=machine,
    )  # fmt: skip
    assert_one_line_error(result, "add --prometheus URL")
