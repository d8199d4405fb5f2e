"""report.csv (`encbench report DIR --csv`): summary.json flattened for a spreadsheet or a
script, one row per cell and metric.

Columns: the study; the cell's own fields, which every study's cell model lists before its
`rounds` (at rest workload, regime, threads, algorithm, scope, shape; in transit test, method,
key type, …), one column per field name over all studies, empty where a study has no such
field; the cell in words; the metric; the encrypted and the plain side's mean where the
summary has one under the metric's name; the cost in % (positive: encryption costs) with its
95% interval; the verdict in words and its kind; the rounds.  Figures at full precision."""

from __future__ import annotations

import csv
import io
from typing import Any

from pydantic import BaseModel

from encbench.report.cell_summary import CellSummary
from encbench.report.models import Estimate, Summary

# The plain values a cell model lists before `rounds` identify the cell; these two only
# describe it.
NOT_IDENTITY = ("label", "unit")
RESULT_COLUMNS = (
    "cell",
    "metric",
    "encrypted",
    "plain",
    "cost_pct",
    "ci_low_pct",
    "ci_high_pct",
    "verdict",
    "verdict_kind",
    "rounds",
)


def identity(cell: BaseModel) -> dict[str, Any]:
    """The cell's own fields (what it measures, not what was measured): the plain values its
    model adds to CellSummary's, or, a model of its own, lists before `rounds` (a shared
    base's figures, listed first, are no column)."""
    fields = type(cell).model_fields
    names = list(fields)
    if isinstance(cell, CellSummary):
        own = [n for n in names if n not in CellSummary.model_fields]
    else:
        own = names[: names.index("rounds")] if "rounds" in names else []
    return {
        n: getattr(cell, n)
        for n in own
        if n not in NOT_IDENTITY and fields[n].annotation in (str, int, float, bool)
    }


def _mean(variants: Any, side: str, metric: str) -> float | None:
    value = getattr(getattr(variants, side, None), metric, None)
    mean = getattr(value, "mean", None)
    return mean if isinstance(mean, int | float) else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _words(own: dict[str, Any]) -> str:
    """A cell without a label of its own, in words: its fields that are set."""
    return " ".join(_text(v) for v in own.values() if v not in ("", None))


def rows(summary: Summary) -> tuple[list[str], list[dict[str, str]]]:
    """The header and one row per measured cell and metric, study by study."""
    keys: list[str] = []
    found: list[dict[str, str]] = []
    for study, part in summary.studies.items():
        for cell in getattr(part, "cells", []):
            own = identity(cell)
            keys += [k for k in own if k not in keys]
            comparisons: dict[str, Estimate] = getattr(cell, "comparisons", {})
            for metric, estimate in comparisons.items():
                low, high = estimate.overhead_ci_pct or (None, None)
                variants = getattr(cell, "variants", None)
                values = {
                    "study": study,
                    **own,
                    "cell": getattr(cell, "label", None) or _words(own),
                    "metric": metric,
                    "encrypted": _mean(variants, "encrypted", metric),
                    "plain": _mean(variants, "plain", metric),
                    "cost_pct": estimate.overhead_pct,
                    "ci_low_pct": low,
                    "ci_high_pct": high,
                    "verdict": estimate.verdict,
                    "verdict_kind": estimate.kind,
                    "rounds": getattr(cell, "rounds", None),
                }
                found.append({k: _text(v) for k, v in values.items()})
    return ["study", *keys, *RESULT_COLUMNS], found


def render(summary: Summary) -> str:
    header, found = rows(summary)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, restval="")
    writer.writeheader()
    writer.writerows(found)
    return out.getvalue()
