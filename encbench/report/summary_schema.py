"""The JSON Schema of summary.json, for programs that read it: made from the same pydantic
models that write it and read it back (report/models.py's Summary, each study's part under
its name), and shipped beside this module as summary.schema.json (`encbench schema` prints
it).  tests/report/test_summary_schema.py fails when the shipped file is not what the models make,
and validates summaries of every study against it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field, create_model

from encbench.report.models import Model, Summary
from encbench.report.parts import Reported
from encbench.results.schema import SUMMARY_SCHEMA

FILE = "summary.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def make(studies: Sequence[Reported]) -> dict[str, Any]:
    """The schema: the Summary model with `studies` holding each study's own part model (a
    study the run did not measure is left out, so none is required)."""
    parts: dict[str, Any] = {
        s.name.replace("-", "_"): (s.report.model, Field(default=None, alias=s.name))
        for s in studies
    }
    studies_model: type[BaseModel] = create_model("Studies", __base__=Model, **parts)
    summary_model: type[BaseModel] = create_model(
        "Summary", __base__=Summary, studies=(studies_model, ...)
    )
    body = summary_model.model_json_schema(by_alias=True, mode="validation")
    # The layout this encbench writes: another one is refused by `report` and `compare`.
    body["properties"]["schema"] = {"const": SUMMARY_SCHEMA, "title": "Schema"}
    body["required"] = sorted({*body.get("required", []), "schema"})
    return {
        "$schema": DIALECT,
        "title": "encbench summary.json",
        "description": (
            f"Every figure of one encbench results directory (summary.json schema "
            f"{SUMMARY_SCHEMA}): each study's part under its name, per cell the means, the "
            "ratios encrypted/plain with their intervals, overheads (positive: encryption "
            "costs) and verdicts; the environment and encbench's own CPU."
        ),
        **{k: v for k, v in body.items() if k != "title"},
    }


def text(schema: dict[str, Any]) -> str:
    """As the file is written: sorted neither by key nor otherwise, indented, one newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped() -> str:
    """The schema file shipped with this encbench."""
    return resources.files("encbench.report").joinpath(FILE).read_text()
