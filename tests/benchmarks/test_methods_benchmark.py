"""benchmarks/methods.py, issue #9's yardstick: its re-analysis must say what the report says
of the same runs (new analysis) and what the old version printed (Student-t over every
round), or the benchmark compares something nobody runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks.methods import REPO, _interference_pct, analyse, at_rest_profile
from encbench.profiles.profile import load, parse
from encbench.studies.at_rest.options import MeasureSpec
from tests.report.test_html_report import GOLDEN


def golden_rule() -> MeasureSpec:
    return parse((GOLDEN / "profile.toml").read_text(), "golden").measure


def test_the_new_analysis_is_what_the_report_says_of_the_same_runs() -> None:
    analysed, _ = analyse(GOLDEN, golden_rule())
    summary = json.loads((GOLDEN / "summary.json").read_text())
    reported = {
        f"{c['workload']} {c['regime']} t{c['threads']}": c["comparisons"]["tps"]["halfwidth_pct"]
        for c in summary["studies"]["at-rest"]["cells"]
        if "tps" in c.get("comparisons", {})
    }
    compared = [a for a in analysed if a.cell in reported]
    assert len(compared) >= 6
    for a in compared:
        want = reported[a.cell]
        if want is None:
            assert a.new_halfwidth_pct is None, a.cell
        else:
            assert a.new_halfwidth_pct == pytest.approx(want, abs=0.01), a.cell


def test_the_old_analysis_is_student_t_over_every_rounds_log_ratio() -> None:
    analysed, _ = analyse(GOLDEN, golden_rule())
    runs = [json.loads(line) for line in (GOLDEN / "at-rest.jsonl").read_text().splitlines()]
    mine = [r for r in runs if (r["cell"]["regime"], r["cell"]["threads"]) == ("io-bound", 4)]
    by_round: dict[int, dict[str, float]] = {}
    for r in mine:
        by_round.setdefault(r["round"], {})[r["variant"]] = r["tps"]
    logs = np.array([math.log(v["encrypted"] / v["plain"]) for v in by_round.values()])
    half = scipy_stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs))
    mean = logs.mean()
    expected = 100 * (math.exp(mean + half) - math.exp(mean - half)) / 2 / math.exp(mean)
    cell = next(a for a in analysed if a.cell == "oltp_read_only io-bound t4")
    assert cell.rounds == len(logs)
    assert cell.old_halfwidth_pct == pytest.approx(expected, abs=0.01)


def test_each_version_runs_its_own_quick_at_rest_part_only() -> None:
    text = at_rest_profile(REPO, "new")
    profile = parse(text, "quick-at-rest-new")
    quick, _ = load("quick")
    assert profile.studies == ["at-rest"]
    assert profile.measure == quick.measure and profile.data == quick.data


def test_an_old_record_without_interference_gets_it_from_its_parts() -> None:
    old = {"wall_s": 2.0, "other_cpu_s": 0.5, "steal_s": 0.3}
    assert _interference_pct(old, cpus=2) == pytest.approx(20.0)
    assert _interference_pct({**old, "interference_pct": 3.5}, cpus=2) == 3.5
