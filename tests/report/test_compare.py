"""Comparing two results directories: cells matched per study, measured on one side only,
the shape of the tables, and a summary of another schema refused.  The statistics themselves
(Welch's test) are checked against hand computations in test_stats.py."""

from __future__ import annotations

import json
import math
import re

import pytest

from encbench.commands import rendering
from encbench.errors import BadInput
from encbench.report import compare, documents
from encbench.report.models import Estimate, Harness, Summary
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary
from tests.report.test_html_report import golden_summary
from tests.test_stats import T4, T9

NO_HARNESS = Harness(cpu_s=0, measured_wall_s=0, share_of_machine_pct=0)


def entry(ratio: float, se: float, n: int) -> Estimate:
    """A TPS comparison whose log-scale CI is ln(ratio) ± t(n−1)·se."""
    t = {5: T4, 10: T9}[n]
    low, high = math.exp(math.log(ratio) - t * se), math.exp(math.log(ratio) + t * se)
    return Estimate(
        n=n,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        halfwidth_pct=None,
        overhead_pct=(1 - ratio) * 100,
        overhead_ci_pct=((1 - high) * 100, (1 - low) * 100),
        verdict="x",
        kind="cost",
    )


def cell(threads: int, tps: Estimate) -> AtRestCell:
    return AtRestCell(
        workload="oltp_read_only",
        regime="io-bound",
        threads=threads,
        rounds=tps.n,
        measured_s=1.0,
        status="done",
        comparisons={"tps": tps, "cpu_ms_per_txn": tps},
    )


def summary_of(*cells: AtRestCell) -> Summary:
    part = AtRestSummary(
        target_halfwidth_pct=2,
        write_workload_state="",
        servers=None,
        crypto=None,
        harness=NO_HARNESS,
        cells=list(cells),
    )
    return documents.summarize("t", None, {"at-rest": part})


def test_the_change_is_b_minus_a_in_percentage_points_tested_by_welch() -> None:
    out = rendering.compare(
        summary_of(cell(4, entry(0.9, 0.02, 5))),
        summary_of(cell(4, entry(0.8, 0.03, 10))),
        "A",
        "B",
    )
    row = out.groups[0].cells[0].metrics["tps"]
    assert row.change_pp == pytest.approx(10.0)
    assert row.a is not None and row.a.overhead_pct == pytest.approx(10.0)
    assert row.b is not None and row.b.overhead_pct == pytest.approx(20.0)
    assert row.df == pytest.approx(13.0, rel=1e-7)  # as computed by hand in test_stats
    assert row.significant is True


def test_a_cell_measured_on_one_side_only_is_listed_as_such() -> None:
    a = summary_of(cell(1, entry(0.9, 0.02, 5)), cell(4, entry(0.9, 0.02, 5)))
    b = summary_of(cell(4, entry(0.8, 0.03, 10)), cell(64, entry(0.8, 0.03, 10)))
    out = rendering.compare(a, b, "ctr", "cbc")
    assert out.only_in_a == ["oltp_read_only io-bound 1 thr"]
    assert out.only_in_b == ["oltp_read_only io-bound 64 thr"]
    assert [c.threads for c in out.groups[0].cells] == [1, 4, 64]
    md = compare.render_markdown(out)
    assert "| 1 | +10.0% (+4.9 … +14.9) | not measured | – | only in ctr |" in md
    assert "| 64 | not measured | +20.0% (+14.4 … +25.2) | – | only in cbc |" in md
    assert "Measured only in cbc: oltp_read_only io-bound 64 thr." in md


def test_markdown_has_a_five_column_table_per_metric_and_group() -> None:
    out = rendering.compare(golden_summary(), golden_summary(), "run 1", "run 2")
    md = compare.render_markdown(out)
    header = (
        "| Threads | overhead run 1 (95% CI) | overhead run 2 (95% CI) | change | significant? |"
    )
    assert md.count(header) == 2 * 2  # two metrics × two regimes
    rows = [line for line in md.splitlines() if re.match(r"\| \d+ \|", line)]
    assert rows and all(line.count("|") == 6 for line in rows)
    assert "| 4 | +6.1% (+4.7 … +7.6) | +6.1% (+4.7 … +7.6) | +0.0 pp | no (p = 1.000) |" in md
    assert "Welch" in md and "Welch–Satterthwaite" in md
    assert "one session per side cannot show" in md


def test_a_summary_of_schema_1_is_refused_with_the_remedy() -> None:
    old = {**golden_summary().to_json(), "schema": 1}
    with pytest.raises(BadInput, match=r"schema 1 is not 2: re-render it with the encbench that"):
        rendering.compare(golden_summary().to_json(), old, "new", "old")


def test_a_summary_json_as_read_from_disk_is_compared() -> None:
    data = json.loads(json.dumps(golden_summary().to_json()))
    out = rendering.compare(data, data, "a", "b")
    assert len(out.groups) == 2 and not out.only_in_a and not out.only_in_b


def test_the_comparison_is_json_and_its_html_is_self_contained() -> None:
    out = rendering.compare(golden_summary(), golden_summary(), "a<b", "b&c")
    data = out.to_json()
    assert json.loads(json.dumps(data)) == data
    assert compare.Comparison.model_validate(data) == out
    page = compare.render_html(out)
    assert page.count("<svg") == len(out.groups)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page and "a&lt;b" in page and "b&amp;c" in page


def test_in_transit_cells_are_matched_by_test_method_key_cipher_rtt_threads_resumption() -> None:
    from encbench.studies.in_transit import summary as in_transit
    from tests.studies.in_transit.test_transit_plan_and_report import SEED, fake_runs

    part = in_transit.build(fake_runs(), SEED, {})
    fewer = part.model_copy(update={"cells": part.cells[1:]})
    out = rendering.compare(
        documents.summarize("t", None, {"in-transit": part}),
        documents.summarize("t", None, {"in-transit": fewer}),
        "A",
        "B",
    )
    assert {g.study for g in out.groups} == {"in-transit"}
    assert out.only_in_a == [part.cells[0].label] and not out.only_in_b
    md = compare.render_markdown(out)
    assert "| path | overhead A (95% CI) | overhead B (95% CI) | change | significant? |" in md
    assert re.search(r"\| TLS rsa1024, RTT 40 ms, 1 thr \| \+29\.9% .* \| \+0\.0 pp \|", md)
    assert "in transit: Connection setup" in md


def test_operations_cells_are_matched_by_operation_and_encryption_threads() -> None:
    import random

    from encbench.studies.operations import cells as operation_cells
    from encbench.studies.operations import summary as operations
    from encbench.studies.operations.records import OperationCell, OperationRecord
    from tests.studies.operations.test_operations import a_profile, record

    profile = a_profile('[operations]\noperations = ["startup", "backup"]\n')
    startup, backup = operation_cells.cells(profile)
    rng = random.Random(2)

    def rounds_of(cell: OperationCell, plain: float, cost: float) -> list[OperationRecord]:
        """12 rounds, each run with its own ±1% noise: the ratio has a spread to test."""
        runs = []
        for rnd in range(12):
            order = ("plain", "encrypted") if rnd % 2 == 0 else ("encrypted", "plain")
            for position, variant in enumerate(order):
                t = plain * (1 + cost if variant == "encrypted" else 1)
                runs.append(record(cell, rnd, variant, position, t * rng.uniform(0.99, 1.01)))
        return runs

    def side(cost: float, *measured: object) -> Summary:
        runs = rounds_of(startup, 1.5, cost)
        runs += rounds_of(backup, 4.0, 0.05) if backup in measured else []
        part = operations.build(runs, profile, None, None)
        return documents.summarize("ops", None, {"operations": part})

    out = rendering.compare(side(0.2, backup), side(0.5), "A", "B")
    (group,) = out.groups
    assert group.study == "operations" and group.row_header == "operation"
    first = group.cells[0]
    assert first.label == "start-up"
    assert first.metrics["time"].change_pp == pytest.approx(30.0, abs=2.0)
    assert first.metrics["time"].significant
    assert out.only_in_a == ["mariadb-backup --backup"] and not out.only_in_b
    md = compare.render_markdown(out)
    assert "| operation | overhead A (95% CI) | overhead B (95% CI) | change | significant? |" in md
    assert re.search(r"\| start-up \| \+(19|20|21)\.\d% \(.*\| \+(29|30|31)\.\d pp \| yes \(p", md)


def test_state_transfer_cells_are_compared_and_a_cell_of_one_side_is_named() -> None:
    import dataclasses
    import random

    from encbench.studies.state_transfer import summary as state_transfer
    from tests.studies.state_transfer.test_state_transfer import a_profile, record

    profile = a_profile('[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\n')
    rng = random.Random(3)

    def side(cost: float, rounds: int) -> Summary:
        runs = []
        for rnd in range(rounds):
            order = ("plain", "encrypted") if rnd % 2 == 0 else ("encrypted", "plain")
            for position, variant in enumerate(order):
                sync_s = 4.0 * (1 + cost if variant == "encrypted" else 1) * rng.uniform(0.99, 1.01)
                run = record(variant, rnd, sync_s)
                runs.append(dataclasses.replace(run, position=position, transfer_s=sync_s / 2))
        part = state_transfer.build(runs, profile, None)
        return documents.summarize("sst", None, {"state-transfer": part})

    out = rendering.compare(side(0.1, 12), side(0.3, 12), "A", "B")
    (group,) = out.groups
    assert group.study == "state-transfer" and set(group.metrics) == {"sync_s", "transfer_s"}
    (cell,) = group.cells
    assert cell.metrics["sync_s"].change_pp == pytest.approx(20.0, abs=2.0)
    assert cell.metrics["sync_s"].significant
    md = compare.render_markdown(out)
    assert "Time to Synced added by encryption" in md and cell.label in md
    assert compare.render_html(out).count("<svg") == 1
    # Measured on one side only: named, not silently dropped.
    one_sided = rendering.compare(side(0.1, 12), side(0.1, 0), "A", "B")
    assert one_sided.only_in_a == [cell.name] and not one_sided.only_in_b
    assert "Measured only in A: " in compare.render_markdown(one_sided)
