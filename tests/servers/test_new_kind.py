"""A new server kind comes in through one door: a ServerKind beside MariaDB's and
PostgreSQL's in the list of kinds (server_kind.KINDS), whose facts name the module of its
ways (here, this one's WAYS), and nothing else.  A toy kind gets
its DSN read, its target's rules and default port, its leftover databases' statement, its
sandboxes recognised and stopped by `encbench clean`, its tools in `doctor`, its version in
the environment, the report's software line and compare's set-up table — and a toy study
that measures it gets a plan, a report and a comparison, without a line of the shared code
naming it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from encbench import studies
from encbench.commands import plan, rendering
from encbench.errors import BadInput
from encbench.machine import environment
from encbench.machine.checks import Check
from encbench.profiles import profile as profiles
from encbench.report import markdown
from encbench.results.store import ResultStore
from encbench.servers import dsn, leftovers, registry, server_kind
from encbench.servers.kind import Sandboxed, ServerKind
from encbench.servers.server_kind import KINDS
from encbench.servers.ways import KindWays, TargetWays
from tests.engine.test_new_study import TOML, TOY, _runs

STOPPED: list[int] = []


def _stop(process: Any) -> None:
    STOPPED.append(process.pid)


def _no_target(*args: Any) -> Any:
    raise AssertionError("the toy's target is never reached in these tests")


TOY_KIND = ServerKind(
    name="toy",
    title="ToyDB",
    schemes=("toydb",),
    default_port=7777,
    dsn_parameters={"tls-ca": "ssl_ca"},
    password_fix="give the password in TOY_PWD",
    installed_version=lambda: "1.2.3",
    sandbox=Sandboxed(
        mark=lambda entry: entry.datadir,
        names=lambda cmdline, mark: mark in cmdline,
        stop=_stop,
    ),
    quote_identifier=lambda name: f"[{name}]",
    profiles_example="e.g. toy",
    ways=__name__,
    target_rules=lambda spec: "a ToyDB target has no socket" if spec.socket else None,
)
WAYS = KindWays(
    tools=lambda: [Check("toyd", True, "/usr/bin/toyd")],
    target=TargetWays(
        check=_no_target, plan_lines=_no_target, ownership=_no_target, dropper=_no_target
    ),
)
TOY_STUDY = dataclasses.replace(TOY, kinds=("toy",))


@pytest.fixture
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    server_kind.register_kinds((*KINDS, TOY_KIND))
    before = studies.STUDIES
    monkeypatch.setattr(studies, "STUDIES", (*before, TOY_STUDY))
    profiles.register_studies(studies.STUDIES)
    yield
    profiles.register_studies(before)
    server_kind.register_kinds(KINDS)


def test_its_dsn_target_rules_and_leftovers_are_its_own(toy_kind: None) -> None:
    fields = dsn.parse_dsn("toydb://bench@db.example/?tls-ca=/ca.pem")
    assert fields == {
        "user": "bench",
        "kind": "toy",
        "ssl_ca": "/ca.pem",
        "host": "db.example",
        "port": 7777,
    }
    with pytest.raises(BadInput, match="password in TOY_PWD"):
        dsn.parse_dsn("toydb://bench:secret@db.example/")
    with pytest.raises(BadInput, match="not a mysql:// or postgresql:// or toydb:// DSN"):
        dsn.parse_dsn("oracle://bench@db.example/")
    with pytest.raises(BadInput, match="MariaDB's option file, not ToyDB's: give the password"):
        dsn.with_target('name = "x"\n', False, "toydb://bench@h/", Path("my.cnf"), False)
    spec = profiles.TargetSpec.model_validate({"kind": "toy", "user": "u", "host": "h"})
    assert spec.port == 7777
    with pytest.raises(ValueError, match="a ToyDB target has no socket"):
        profiles.TargetSpec.model_validate({"kind": "toy", "user": "u", "socket": "/s"})
    assert leftovers.drop_statement("toy", "encbench_1") == "DROP DATABASE [encbench_1];"
    # A profile of MariaDB studies refuses a toy target with the toy's own words.
    with pytest.raises(BadInput, match=r"a ToyDB server .* measure MariaDB.*\(e\.g\. toy\)"):
        profiles.parse('name = "x"\n[target]\nkind = "toy"\nuser = "u"\nhost = "h"\n', "p")


def test_clean_recognises_and_stops_its_sandboxes_as_it_says(
    toy_kind: None, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = registry.Entry.new(
        "toy", 4242, tmp_path, tmp_path, tmp_path / "c", kind="toy", datadir=tmp_path / "d"
    )
    assert entry.command_mark == str(tmp_path / "d")

    class Process:
        pid = 4242

    registry.stop_server(entry, Process())  # type: ignore[arg-type]
    assert STOPPED[-1] == 4242
    # Without the toy registered, the same entry is never signalled.
    server_kind.register_kinds(KINDS)
    assert entry.command_mark == "" and not registry.server_running(entry)


def test_doctor_the_environment_a_plan_a_report_and_compare_name_it(
    toy_kind: None, tmp_path: Path
) -> None:
    prof = profiles.parse(TOML, "toy.toml")
    (study,) = studies.named(prof)
    assert [c.name for c in study.machine_needs(prof)] == ["toyd"]
    assert environment.collect(server_kind.installed_versions())["toy"] == "1.2.3"
    assert "toy: nothing at all; plain toy against encrypted toy" in "\n".join(plan.lines(prof))

    summaries = []
    for k, (cost, version) in enumerate(((0.10, "1.2.3"), (0.30, "2.0.0"))):
        store = ResultStore.create(tmp_path / f"r{k}", "toy", TOML)
        env = {"cpu": {"model": "Toy CPU", "cores": 2}, "toy": version, "openssl": "OpenSSL 3.0.17"}
        store.write_json("environment.json", env)
        _runs(store, cost, k, (1, 2))
        summaries.append(rendering.build_summary(store, prof))
    setup = markdown.render(rendering.document(summaries[0]))
    assert "ToyDB 1.2.3, OpenSSL 3.0.17" in setup and "MariaDB" not in setup
    assert "sysbench" not in setup  # the toy drives none
    compared = rendering.compare(summaries[0], summaries[1], "A", "B")
    lines = {line.what: line for line in compared.setup}
    assert (lines["ToyDB"].a, lines["ToyDB"].b, lines["ToyDB"].differs) == ("1.2.3", "2.0.0", True)
    assert "MariaDB" not in lines and "PostgreSQL" not in lines
