"""Comparing two results directories: Welch's test on log ratios against values computed by
hand, cells measured on one side only, and the shape of the tables."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from encbench.errors import BadInput
from encbench.report import compare
from tests.test_html_report import golden_summary

# Student-t 0.975 quantiles from the tables, for 4, 9 and 13 degrees of freedom.
T4, T9, T13 = 2.776445105, 2.262157163, 2.160368656


def entry(ratio: float, se: float, n: int) -> dict[str, Any]:
    """A summary.json TPS comparison whose log-scale CI is ln(ratio) ± t(n−1)·se."""
    t = {5: T4, 10: T9}[n]
    low, high = math.exp(math.log(ratio) - t * se), math.exp(math.log(ratio) + t * se)
    return {
        "n": n,
        "ratio": ratio,
        "ci_low": low,
        "ci_high": high,
        "overhead_pct": (1 - ratio) * 100,
        "overhead_ci_pct": [(1 - high) * 100, (1 - low) * 100],
        "verdict": "x",
    }


def cell(threads: int, tps: dict[str, Any], regime: str = "io-bound") -> dict[str, Any]:
    return {
        "workload": "oltp_read_only",
        "regime": regime,
        "threads": threads,
        "rounds": tps["n"],
        "comparisons": {"tps": tps, "cpu_ms_per_txn": tps},
    }


def summary_of(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"profile": "t", "cells": list(cells)}


def t_pdf(x: float, df: float) -> float:
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


def two_sided_p(t: float, df: float, steps: int = 4000) -> float:
    """1 − 2·∫₀^|t| pdf, by Simpson's rule: independent of scipy."""
    h = abs(t) / steps
    s = t_pdf(0, df) + t_pdf(abs(t), df)
    s += sum((4 if k % 2 else 2) * t_pdf(k * h, df) for k in range(1, steps))
    return 1 - 2 * s * h / 3


def test_each_sides_standard_error_is_recovered_from_its_ci() -> None:
    assert compare.side_se(entry(0.9, 0.02, 5)) == pytest.approx(0.02, rel=1e-8)
    assert compare.side_se(entry(0.8, 0.03, 10)) == pytest.approx(0.03, rel=1e-8)


def test_welch_gives_the_hand_computed_t_degrees_of_freedom_and_p() -> None:
    result = compare.welch(entry(0.9, 0.02, 5), entry(0.8, 0.03, 10))
    d = math.log(0.8 / 0.9)
    se = math.sqrt(0.02**2 + 0.03**2)
    # (0.0004 + 0.0009)² / (0.0004²/4 + 0.0009²/9) = 1.69e-6 / 1.3e-7 = 13
    assert result["df"] == pytest.approx(13.0, rel=1e-7)
    assert result["t"] == pytest.approx(d / se, rel=1e-7)
    assert result["t"] == pytest.approx(-3.26671, abs=1e-5)
    assert result["p"] == pytest.approx(two_sided_p(d / se, 13.0), abs=1e-8)
    assert result["significant"] is True
    low, high = result["ratio_of_ratios_ci"]
    assert low == pytest.approx(math.exp(d - T13 * se), rel=1e-7)
    assert high == pytest.approx(math.exp(d + T13 * se), rel=1e-7)


def test_overlapping_costs_are_not_a_significant_change() -> None:
    result = compare.welch(entry(0.9, 0.02, 5), entry(0.89, 0.03, 10))
    assert result["significant"] is False
    assert result["p"] == pytest.approx(two_sided_p(result["t"], result["df"]), abs=1e-8)


def test_a_side_with_one_round_cannot_be_tested() -> None:
    one = {**entry(0.9, 0.02, 5), "n": 1, "ci_low": None, "ci_high": None}
    result = compare.welch(one, entry(0.8, 0.03, 10))
    assert result["significant"] is None
    assert "fewer than 2 rounds" in result["note"]


def test_the_change_is_b_minus_a_in_percentage_points() -> None:
    out = compare.compare(
        summary_of(cell(4, entry(0.9, 0.02, 5))),
        summary_of(cell(4, entry(0.8, 0.03, 10))),
        "A",
        "B",
    )
    row = out["groups"][0]["cells"][0]["tps"]
    assert row["change_pp"] == pytest.approx(10.0)
    assert row["a"]["overhead_pct"] == pytest.approx(10.0)
    assert row["b"]["overhead_pct"] == pytest.approx(20.0)


def test_a_cell_measured_on_one_side_only_is_listed_as_such() -> None:
    a = summary_of(cell(1, entry(0.9, 0.02, 5)), cell(4, entry(0.9, 0.02, 5)))
    b = summary_of(cell(4, entry(0.8, 0.03, 10)), cell(64, entry(0.8, 0.03, 10)))
    out = compare.compare(a, b, "ctr", "cbc")
    assert out["only_in_a"] == [["oltp_read_only", "io-bound", 1]]
    assert out["only_in_b"] == [["oltp_read_only", "io-bound", 64]]
    assert [c["threads"] for c in out["groups"][0]["cells"]] == [1, 4, 64]
    md = compare.render_markdown(out)
    assert "| 1 | +10.0% (+4.9 … +14.9) | not measured | – | only in ctr |" in md
    assert "| 64 | not measured | +20.0% (+14.4 … +25.2) | – | only in cbc |" in md
    assert "Measured only in cbc: oltp_read_only io-bound 64 thr." in md


def test_markdown_has_a_five_column_table_per_metric_and_group() -> None:
    out = compare.compare(golden_summary(), golden_summary(), "run 1", "run 2")
    md = compare.render_markdown(out)
    header = (
        "| Threads | overhead run 1 (95% CI) | overhead run 2 (95% CI) | change | significant? |"
    )
    assert md.count(header) == 2 * 2  # two metrics × two regimes
    rows = [line for line in md.splitlines() if re.match(r"\| \d+ \|", line)]
    assert rows and all(line.count("|") == 6 for line in rows)
    assert (
        "| 4 | +12.2% (+11.9 … +12.5) | +12.2% (+11.9 … +12.5) | +0.0 pp | no (p = 1.000) |" in md
    )
    assert "Welch" in md and "Welch–Satterthwaite" in md


def test_a_summary_of_another_schema_is_refused_with_the_remedy() -> None:
    newer = {**golden_summary(), "schema": 99}
    with pytest.raises(BadInput, match=r"schema 99 .*encbench report DIR"):
        compare.compare(golden_summary(), newer, "old", "new")


def test_the_comparison_is_json_and_its_html_is_self_contained() -> None:
    out = compare.compare(golden_summary(), golden_summary(), "a<b", "b&c")
    assert json.loads(json.dumps(out)) == out
    page = compare.render_html(out)
    assert page.count("<svg") == len(out["groups"])
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page and "a&lt;b" in page and "b&amp;c" in page
