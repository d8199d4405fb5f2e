"""Round order, stopping rule, and the report built from runs alone."""

import dataclasses

import pytest

from encbench import profile
from encbench.engine import rounds as plan
from encbench.report import at_rest, documents, markdown
from encbench.report.models import AtRestSummary
from encbench.results.schema import CellKey
from tests.test_store import record

PROFILE = profile.parse(
    'name = "t"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["in-memory"]\n'
    "threads = [4]\nmin_rounds = 3\nmax_rounds = 6\ncell_budget_s = 1000\n",
    "t.toml",
)
CELL = CellKey("oltp_read_only", "in-memory", 4)


def rounds_of(pairs: list[tuple[float, float]]) -> list:
    runs = []
    for n, (enc, plain) in enumerate(pairs):
        runs += [record(n, "plain", plain), record(n, "encrypted", enc)]
    return runs


def test_rounds_alternate_abba() -> None:
    orders = [plan.round_order(n) for n in range(4)]
    assert orders == [("plain", "encrypted"), ("encrypted", "plain")] * 2


def test_a_half_round_is_not_paired() -> None:
    runs = [*rounds_of([(90, 100), (91, 100)]), record(2, "plain", 100)]
    assert len(plan.complete_rounds(runs, CELL)) == 2
    assert plan.next_round_number(runs, CELL) == 3


def test_cell_goes_on_until_min_rounds_then_stops_at_target() -> None:
    two = plan.complete_rounds(rounds_of([(90, 100)] * 2), CELL)
    assert plan.stop_reason(two, PROFILE.measure, "tps") is None
    three = plan.complete_rounds(rounds_of([(90, 100)] * 3), CELL)
    assert plan.stop_reason(three, PROFILE.measure, "tps") == "target ±2% reached"


def test_noisy_cell_stops_at_max_rounds() -> None:
    noisy = [(80, 100), (120, 100)] * 3
    rounds = plan.complete_rounds(rounds_of(noisy), CELL)
    assert plan.stop_reason(rounds[:5], PROFILE.measure, "tps") is None
    assert plan.stop_reason(rounds, PROFILE.measure, "tps") == "max rounds (6) reached"


def test_noisy_cell_stops_before_overrunning_its_budget() -> None:
    tight = PROFILE.model_copy(
        update={"measure": PROFILE.measure.model_copy(update={"cell_budget_s": 35})}
    )
    rounds = plan.complete_rounds(rounds_of([(80, 100), (120, 100), (80, 100)]), CELL)
    # three rounds of 2 × 5 s = 30 s; a fourth would end at 40 s > 35 s.
    assert plan.stop_reason(rounds, tight.measure, "tps") == "time budget (35 s) ended"


def report_md(part: AtRestSummary) -> str:
    return markdown.render(documents.document(documents.summarize("t", None, {"at-rest": part})))


def test_report_has_a_seed_shaped_row_with_verdict() -> None:
    runs = rounds_of([(90, 100), (91, 100), (89, 100)])
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    cell = data.cells[0]
    assert cell.rounds == 3
    assert cell.comparisons["tps"].verdict.startswith("10.0% slower (95% CI")
    text = report_md(data)
    assert "| Threads | encrypted TPS | no encryption TPS | overhead (95% CI) |" in text
    assert "| 4 | 90.00 | 100.00 | +10.0% (" in text
    assert "geometric mean of per-round paired ratios" in text


def test_harness_share_is_its_cpu_over_the_machine() -> None:
    runs = rounds_of([(90, 100)])
    share = at_rest.harness_share(runs, cores=2)
    # 2 runs × 0.01 s over 2 × 5 s on 2 cores
    assert share.share_of_machine_pct == 100 * 0.02 / (10 * 2)


def test_unmeasured_cells_say_so() -> None:
    data = at_rest.build([], PROFILE, None, None)
    assert data.cells[0].status == "not measured"
    assert "not measured yet" in report_md(data)


def test_other_load_is_what_the_machine_spent_beyond_server_client_and_harness() -> None:
    from encbench.engine.clocks import Clocks, Window

    start = Clocks(100.0, 10.0, 1.0, 5.0, 500.0, 2.0)
    end = Clocks(101.0, 10.6, 1.01, 5.3, 501.5, 2.1)
    w = Window.between(start, end)
    assert w.wall_s == pytest.approx(1.0)
    assert w.client_cpu_s == pytest.approx(0.3)
    assert w.other_cpu_s == pytest.approx(1.5 - 0.6 - 0.01 - 0.3)
    assert w.steal_s == pytest.approx(0.1)
    # tick granularity can make the remainder negative: it is no load, not negative load
    quiet = Clocks(101.0, 10.6, 1.01, 5.3, 500.85, 2.0)
    assert Window.between(start, quiet).other_cpu_s == 0.0


def test_a_cell_reports_its_other_load_as_a_share_of_the_machine() -> None:
    runs = [
        dataclasses.replace(r, other_cpu_s=0.5, steal_s=0.1)
        for r in rounds_of([(90, 100), (91, 100), (89, 100)])
    ]
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    # (0.5 + 0.1) s per 5 s run on 2 cores
    assert data.cells[0].other_load_pct == pytest.approx(6.0)
    assert "**Shared machine**: other processes used up to 6%" in report_md(data)
