"""summary.json's published JSON Schema: the shipped file is what the models make (after an
intended change of a summary model, rewrite it and review the diff:

    ENCBENCH_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report/test_summary_schema.py

), and the golden summary and a summary of every study validate against it, while a summary
with a figure missing, a key too many or another schema does not."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from encbench import studies
from encbench.report import documents, summary_schema
from encbench.report.models import Model, NoiseFloor, Summary
from tests.helpers import REPO, encbench_here

ROOT = REPO
GOLDEN = ROOT / "tests" / "golden"
SHIPPED = ROOT / "encbench" / "report" / summary_schema.FILE
UPDATE = os.environ.get("ENCBENCH_UPDATE_SNAPSHOTS") == "1"


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SHIPPED.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(data: Any) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in validator().iter_errors(data)]


def test_the_shipped_schema_is_what_the_summary_models_make() -> None:
    made = summary_schema.text(summary_schema.make(studies.reported()))
    if UPDATE:
        SHIPPED.write_text(made)
    assert SHIPPED.read_text() == made, (
        "summary.schema.json is stale: ENCBENCH_UPDATE_SNAPSHOTS=1 .venv/bin/pytest "
        "tests/report/test_summary_schema.py, then review the diff"
    )


def test_encbench_schema_prints_the_shipped_file() -> None:
    result = encbench_here("schema")
    assert result.returncode == 0, result.stderr
    assert result.stdout == SHIPPED.read_text()
    assert summary_schema.shipped() == SHIPPED.read_text()


# A summary written when a study's further kind was a study of its own (its part named as
# that study: pg-in-transit, pg-at-rest) is not this schema's; `compare` builds it again from
# its runs (tests/studies/in_transit/test_transit_results_before.py,
# tests/studies/at_rest/test_at_rest_postgresql.py).
WRITTEN_BEFORE = {GOLDEN / "pg-in-transit" / "summary.json", GOLDEN / "pg-at-rest" / "summary.json"}


@pytest.mark.parametrize(
    "path", sorted(set(GOLDEN.rglob("summary.json")) - WRITTEN_BEFORE), ids=str
)
def test_every_golden_summary_is_valid(path: Path) -> None:
    assert problems(json.loads(path.read_text())) == []


def test_a_summary_written_before_names_a_former_study() -> None:
    for path in WRITTEN_BEFORE:
        parts = set(json.loads(path.read_text())["studies"])
        assert parts & studies.former_names(), path


def _every_study() -> dict[str, Model]:
    """A part of each study, built from synthetic records as the report builds it."""
    from encbench.studies.in_transit import summary as in_transit
    from tests.report.test_html_report import golden_summary
    from tests.report.test_study_plots import (
        operations_part,
        rejoin_part,
        replication_part,
        state_transfer_summary,
    )
    from tests.studies.at_rest.test_at_rest_postgresql import beside_mariadb, pg_at_rest_part
    from tests.studies.in_transit.test_transit_plan_and_report import SEED, fake_runs

    parts = {
        # MariaDB's cells and PostgreSQL's: one part of the study.
        "at-rest": beside_mariadb(golden_summary().part("at-rest"), pg_at_rest_part()),
        "in-transit": in_transit.build(fake_runs(), SEED, {"proofs": {}, "skipped": {}}),
        "operations": operations_part(rounds=8),
        "state-transfer": state_transfer_summary().part("state-transfer"),
        "replication": replication_part(rounds=4),
        "rejoin": rejoin_part(rounds=4),
    }
    assert set(parts) == {s.name for s in studies.reported()}, "a study without a summary here"
    return parts


def test_a_summary_of_every_study_is_valid_as_written() -> None:
    summary = documents.summarize("all", None, _every_study(), not_measured={"x": "why"})
    data = json.loads(json.dumps(summary.to_json()))
    assert problems(data) == []


def test_a_summary_of_postgresqls_cells_in_transit_is_valid_as_written() -> None:
    from tests.studies.in_transit.test_pg_transit import pg_part

    summary = documents.summarize("pg", None, {"in-transit": pg_part()}, not_measured={})
    data = json.loads(json.dumps(summary.to_json()))
    assert data["studies"]["in-transit"]["postgresql"]["postgresql_version"] == "15.14"
    assert problems(data) == []


def test_a_calibration_and_a_noise_floor_are_valid() -> None:
    from tests.report.test_calibration import _calibrated

    aa = _calibrated("at-rest", "2026-01-01T00:00:00+00:00")
    parts = {"at-rest": _every_study()["at-rest"]}
    for summary in (
        documents.summarize("aa", None, parts, calibration=aa),
        documents.summarize("run", None, parts, noise_floor=NoiseFloor(file="f", latest=aa)),
    ):
        assert problems(json.loads(json.dumps(summary.to_json()))) == []


def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "report" / "summary.json").read_text())
    return data


def test_a_summary_with_a_figure_missing_a_key_too_many_or_another_schema_is_invalid() -> None:
    missing = golden()
    del missing["studies"]["at-rest"]["cells"][0]["comparisons"]["tps"]["overhead_pct"]
    assert any("overhead_pct" in p for p in problems(missing))
    extra = golden()
    extra["studies"]["at-rest"]["cells"][0]["colour"] = "red"
    assert any("colour" in p for p in problems(extra))
    unknown_study = golden()
    unknown_study["studies"]["at-rst"] = copy.deepcopy(unknown_study["studies"]["at-rest"])
    assert any("at-rst" in p for p in problems(unknown_study))
    older = {**golden(), "schema": 1}
    assert problems(older)
    wrong_type = golden()
    wrong_type["studies"]["at-rest"]["cells"][0]["threads"] = "four"
    assert problems(wrong_type)


def test_what_the_schema_accepts_encbench_reads_back() -> None:
    """The schema is no looser than the reader where it matters: the golden summary passes
    both, and the reader accepts what was written."""
    data = golden()
    assert problems(data) == []
    assert isinstance(documents.read_summary(data, "golden", studies.STUDIES), Summary)


def test_summary_json_names_each_studys_server_by_kind_name_and_version() -> None:
    """A MySQL target is measured by MariaDB's kind and named MySQL; a study whose record has
    no version takes the installed one; a study not measured has no entry."""
    from dataclasses import dataclass

    from encbench.report.parts import ReportPart, Setup

    class Part(Model):
        version: str | None

    @dataclass(frozen=True)
    class Study:
        name: str
        kinds: tuple[str, ...]
        report: ReportPart
        words: str = ""
        calibration: None = None

    def part(setup_title: str | None) -> ReportPart:
        return ReportPart(
            model=Part,
            build=lambda *a: Part(version=None),
            sections=lambda *a: [],
            setup=lambda p: Setup(server_version=p.version, server_title=setup_title),
        )

    measured = [
        Study("at-rest", ("mariadb",), part("MySQL")),
        Study("pg-at-rest", ("postgresql",), part(None)),
        Study("in-transit", ("mariadb",), part(None)),
    ]
    parts = {"at-rest": Part(version="9.7.4-2"), "pg-at-rest": Part(version=None)}
    env = {"postgresql": "15.14"}
    found = documents.measured_servers(measured, parts, env)
    assert {k: v.model_dump() for k, v in found.items()} == {
        "at-rest": {"kind": "mariadb", "name": "MySQL", "version": "9.7.4-2"},
        "pg-at-rest": {"kind": "postgresql", "name": "PostgreSQL", "version": "15.14"},
    }


def test_a_study_of_several_kinds_names_the_servers_it_measured() -> None:
    from encbench.report.parts import KindMeasured, Setup

    setup = Setup(
        kinds=[KindMeasured("postgresql", "15.14"), KindMeasured("mariadb", "9.7.4", "MySQL")]
    )
    assert setup.kinds_measured(("mariadb", "postgresql")) == ["postgresql", "mariadb"]
    assert setup.version_of("mariadb", ("mariadb", "postgresql")) == ("9.7.4", "MySQL")
    single = Setup(server_version="10.11.14")
    assert single.kinds_measured(("mariadb", "postgresql")) == ["mariadb"]
    assert single.version_of("mariadb", ("mariadb",)) == ("10.11.14", None)
    assert single.version_of("postgresql", ("mariadb", "postgresql")) == (None, None)
