"""Round order, stopping rule, and the report built from runs alone."""

import dataclasses
import random

import pytest

from encbench.commands import rendering
from encbench.engine import rounds as plan
from encbench.engine import stopping_rule
from encbench.profiles import profile
from encbench.report import documents, markdown
from encbench.report.cells import harness_share
from encbench.studies.at_rest import summary as at_rest
from encbench.studies.at_rest.models import AtRestSummary
from encbench.studies.at_rest.records import CellKey
from tests.results.test_store import record

PROFILE = profile.parse(
    'name = "t"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["in-memory"]\n'
    "threads = [4]\nmin_rounds = 12\nmax_rounds = 40\ncell_budget_s = 1000\n",
    "t.toml",
)
RULE = PROFILE.measure
CELL = CellKey("oltp_read_only", "in-memory", 4)


def rounds_of(pairs: list[tuple[float, float]], interference: float = 0.0) -> list:
    """Runs of rounds in blocks, as the runner orders them: A B, B A, A B, …"""
    runs = []
    for n, (enc, plain) in enumerate(pairs):
        first, second = ("plain", "encrypted") if n % 2 == 0 else ("encrypted", "plain")
        values = {"plain": plain, "encrypted": enc}
        for position, variant in enumerate((first, second)):
            runs.append(
                dataclasses.replace(
                    record(n, variant, values[variant]),
                    position=position,
                    interference_pct=interference,
                )
            )
    return runs


def test_counted_rounds_pair_into_blocks_of_opposite_order() -> None:
    state = plan.cell_rounds(rounds_of([(90, 100)] * 5), CELL, RULE)
    assert len(state.blocks) == 2
    assert [b.first.order for b in state.blocks] == [("plain", "encrypted")] * 2
    assert [b.second.order for b in state.blocks] == [("encrypted", "plain")] * 2
    assert [r.number for r in state.unpaired] == [4]


def test_the_next_round_completes_an_open_block_else_draws_its_order() -> None:
    class Draw(random.Random):
        def __init__(self, value: float) -> None:
            super().__init__()
            self.value = value

        def random(self) -> float:
            return self.value

    open_block = plan.cell_rounds(rounds_of([(90, 100)] * 3), CELL, RULE)
    assert plan.next_order(open_block, Draw(0.9)) == ("encrypted", "plain")
    closed = plan.cell_rounds(rounds_of([(90, 100)] * 2), CELL, RULE)
    assert plan.next_order(closed, Draw(0.9)) == ("encrypted", "plain")
    assert plan.next_order(closed, Draw(0.1)) == ("plain", "encrypted")


def test_a_half_round_is_not_paired() -> None:
    runs = [*rounds_of([(90, 100), (91, 100)]), record(2, "plain", 100)]
    assert len(plan.complete_rounds(runs, CELL)) == 2
    assert plan.next_round_number(runs, CELL) == 3


def test_a_round_with_too_much_interference_is_kept_but_not_counted() -> None:
    # As the runner measures them: round 1 (B A) is hit, so round 2 is B A again.
    runs = rounds_of([(90, 100)] * 2)
    runs += [dataclasses.replace(r, round=2) for r in runs if r.round == 1]
    runs += [dataclasses.replace(r, round=3) for r in runs if r.round == 0]
    noisy = [
        dataclasses.replace(r, interference_pct=RULE.interference_max_pct + 1)
        if r.round == 1 and r.variant == "encrypted"
        else r
        for r in runs
    ]
    state = plan.cell_rounds(noisy, CELL, RULE)
    assert [r.number for r in state.rejected] == [1]
    assert [r.number for r in state.counted] == [0, 2, 3]
    assert [(b.first.number, b.second.number) for b in state.blocks] == [(0, 2)]
    assert [r.number for r in state.unpaired] == [3]
    assert state.wall_s == 4 * 2 * 5.0, "rejected rounds spend the budget too"


def test_stage_one_plans_the_blocks_and_the_cell_stops_only_after_them() -> None:
    quiet = [(90.0 + (n % 3) * 0.1, 100.0) for n in range(40)]
    runs = rounds_of(quiet)
    # Stage one = the first 12 rounds (6 blocks); so quiet that it plans no more.
    assert (
        stopping_rule.planned_blocks(plan.cell_rounds(runs[: 2 * 10], CELL, RULE), RULE, "tps")
        is None
    )
    state = plan.cell_rounds(runs[: 2 * 12], CELL, RULE)
    assert stopping_rule.planned_blocks(state, RULE, "tps") == 6
    assert stopping_rule.stop_reason(state, RULE, "tps") == "planned 12 rounds for ±2% done"
    # Never in the middle of a block.
    assert (
        stopping_rule.stop_reason(plan.cell_rounds(runs[: 2 * 13], CELL, RULE), RULE, "tps") is None
    )


def test_a_noisy_stage_one_plans_more_blocks_and_the_budget_can_end_it() -> None:
    noisy = [(80.0 if n % 4 < 2 else 100.0, 100.0) for n in range(40)]
    state = plan.cell_rounds(rounds_of(noisy)[: 2 * 12], CELL, RULE)
    planned = stopping_rule.planned_blocks(state, RULE, "tps")
    assert planned is not None and planned > 6
    assert stopping_rule.stop_reason(state, RULE, "tps") is None
    tight = RULE.model_copy(update={"cell_budget_s": 125})
    # 12 rounds of 2 × 5 s = 120 s; another block would end at 140 s > 125 s.
    # The row says what bound it: the budget, before the rounds stage one planned.
    assert stopping_rule.stop_reason(state, tight, "tps") == (
        f"time budget (125 s) ended before the {2 * planned} rounds planned for ±2%"
    )


def test_noisy_cell_stops_at_max_rounds() -> None:
    noisy = [(80.0 if n % 4 < 2 else 100.0, 100.0) for n in range(40)]
    state = plan.cell_rounds(rounds_of(noisy), CELL, RULE)
    assert stopping_rule.stop_reason(state, RULE, "tps") == "max rounds (40) reached"


def report_md(part: AtRestSummary) -> str:
    return markdown.render(rendering.document(documents.summarize("t", None, {"at-rest": part})))


def test_report_has_a_seed_shaped_row_with_verdict() -> None:
    runs = rounds_of([(90, 100), (91, 100), (89, 100)] * 4)
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    cell = data.cells[0]
    assert cell.rounds == 12
    assert cell.comparisons["tps"].verdict.startswith("10.0% slower (95% CI")
    text = report_md(data)
    assert "| Threads | encrypted TPS | no encryption TPS | overhead (95% CI) |" in text
    assert "| 4 | 90.00 | 100.00 | +10.0% (" in text
    assert "Hodges–Lehmann estimate of paired log ratios" in text
    assert "1 of 1 cell differ in tps at 95%; about 0.1 would by chance alone" in text
    assert "No round was measured again" in text


def test_a_report_counts_the_rounds_measured_again() -> None:
    runs = rounds_of([(90, 100), (91, 100), (89, 100)] * 4)
    runs += [
        dataclasses.replace(r, round=r.round + 12, interference_pct=50.0)
        for r in rounds_of([(70, 100)] * 2)
    ]
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    assert data.cells[0].rounds_rejected == 2
    assert data.cells[0].comparisons["tps"].verdict.startswith("10.0% slower")
    assert "2 round(s) measured again because another process" in report_md(data)


def test_harness_share_is_its_cpu_over_the_machine() -> None:
    runs = rounds_of([(90, 100)])
    share = harness_share(runs, cores=2)
    # 2 runs × 0.01 s over 2 × 5 s on 2 cores
    assert share.share_of_machine_pct == 100 * 0.02 / (10 * 2)


def test_unmeasured_cells_say_so() -> None:
    data = at_rest.build([], PROFILE, None, None)
    assert data.cells[0].status == "not measured"
    assert "not measured yet" in report_md(data)


def test_interference_is_what_the_machine_spent_beyond_this_runs_processes() -> None:
    from encbench.engine.clocks import Clocks, Window

    # The run's processes: the server (pid 1, +0.6 s) and its idle peer (pid 2, +0.2 s);
    # pid 3 ended within the window (reaped by its parent: counted in the parent's tree).
    start = Clocks(100.0, 10.0, 1.0, 5.0, 500.0, 2.0, {1: 10.0, 2: 3.0, 3: 1.0})
    end = Clocks(101.0, 10.6, 1.01, 5.3, 501.5, 2.1, {1: 10.6, 2: 3.2})
    w = Window.between(start, end, cores=2)
    assert w.wall_s == pytest.approx(1.0)
    assert w.client_cpu_s == pytest.approx(0.3)
    assert w.other_cpu_s == pytest.approx(1.5 - 0.6 - 0.2 - 0.01 - 0.3)
    assert w.steal_s == pytest.approx(0.1)
    assert w.interference_pct == pytest.approx(100 * (0.39 + 0.1) / 2)
    # tick granularity can make the remainder negative: it is no load, not negative load
    quiet = Clocks(101.0, 10.6, 1.01, 5.3, 500.85, 2.0, {1: 10.6, 2: 3.2})
    assert Window.between(start, quiet).other_cpu_s == 0.0


def test_a_process_born_in_the_window_is_the_runs_not_other_load() -> None:
    from encbench.engine.clocks import Clocks, Window

    # pid 4 was forked during the window (a PostgreSQL backend for the client's connection)
    # and still runs at its end: its 0.5 s are the run's.  pid 2's pid was recycled by a new
    # process (it reads less than at the start): all of its 0.1 s are the window's.
    start = Clocks(100.0, 10.0, 1.0, 5.0, 500.0, 2.0, {1: 10.0, 2: 3.0})
    end = Clocks(101.0, 10.6, 1.0, 5.0, 501.2, 2.0, {1: 10.6, 2: 0.1, 4: 0.5})
    assert Window.between(start, end, cores=2).other_cpu_s == pytest.approx(0.0)


def test_the_closing_reading_finds_the_processes_born_since_the_opening_one() -> None:
    import os
    import subprocess
    import sys

    from encbench.engine.clocks import Clocks

    start = Clocks.read(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        end = Clocks.read(os.getpid(), start.pids)
        assert child.pid not in start.pids and child.pid in end.pids
    finally:
        child.kill()  # the process this test started, by its pid
        child.wait()


def test_a_cell_reports_its_other_load_as_a_share_of_the_machine() -> None:
    runs = [
        dataclasses.replace(r, other_cpu_s=0.5, steal_s=0.1)
        for r in rounds_of([(90, 100), (91, 100), (89, 100)] * 4)
    ]
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    # (0.5 + 0.1) s per 5 s run on 2 cores
    assert data.cells[0].other_load_pct == pytest.approx(6.0)
    assert "**Shared machine**: other processes and the hypervisor (steal) took up to 6%" in (
        report_md(data)
    )


def test_a_cells_steady_steal_is_its_usual_level_and_only_a_burst_above_it_is_measured_again() -> (
    None
):
    # io-bound on a VM: the host's disk emulation steals ~10% from both variants, every round.
    runs = rounds_of([(90, 100)] * 12, interference=10.0)
    assert plan.cell_rounds(runs, CELL, RULE).rejected == []
    burst = [
        dataclasses.replace(r, interference_pct=10.0 + RULE.interference_max_pct + 5)
        if r.round == 7 and r.variant == "plain"
        else r
        for r in runs
    ]
    assert [r.number for r in plan.cell_rounds(burst, CELL, RULE).rejected] == [7]


def test_server_starts_are_counted_over_every_configuration_and_shape() -> None:
    from encbench.studies.at_rest.summary import server_starts

    record = {
        "restart": "block",
        "regimes": {"in-memory": {"starts": 7}, "io-bound": {}},  # {}: a record from before
        "configurations": {
            "AES_CTR, scope all": {
                "regimes": {"in-memory": {"starts": 3}},
                "shapes": {"small": {"regimes": {"io-bound": {"starts": 2}}}},
            }
        },
    }
    assert server_starts(record) == 7 + 1 + 3 + 2
    assert server_starts(None) == 0


def test_the_set_up_says_when_the_servers_started_afresh() -> None:
    from encbench.studies.at_rest.models import AtRestSummary
    from encbench.studies.at_rest.section import restart_words

    def words(restart: str, starts: int | None) -> str:
        part = AtRestSummary.model_construct(restart=restart, server_starts=starts)
        return restart_words(part)

    assert "before every block" in words("block", 12) and "12 starts" in words("block", 12)
    assert "do not cover it" in words("regime", 2)
    assert "target's, never restarted" in words("block", None)


def test_steady_runs_show_p99_the_worst_maximum_and_each_stall_with_its_waits() -> None:
    """The steady write design's runs keep p99 and their series: the latency table gives
    p99 with its interval, the worst maximum and the stalled runs per side, a note says what
    the server counted the stalled runs waiting for, and the cell carries each side's
    series for the plot."""
    runs = [
        dataclasses.replace(
            r,
            latency_p99_ms=3.0 if r.variant == "plain" else 3.3,
            tps_per_s=[r.tps, r.tps],
            latency_max_ms=2500.0 if (r.variant, r.round) == ("encrypted", 5) else 40.0,
            bp_wait_free=7 if (r.variant, r.round) == ("encrypted", 5) else 0,
            leveled=r.round != 0,
        )
        for r in rounds_of([(90, 100), (91, 100), (89, 100)] * 4)
    ]
    data = at_rest.build(runs, PROFILE, None, {"cpu": {"cores": 2}})
    cell = data.cells[0]
    assert cell.comparisons["latency_p99_ms"].verdict.startswith("10.0% ")
    assert cell.series is not None and len(cell.series["plain"]) == 2 * 12
    assert cell.leveled is False  # one block began before its servers leveled off
    assert cell.variants is not None and cell.variants.encrypted.stalled_runs == 1
    text = report_md(data)
    assert "| p99 latency ms (enc / plain) | p99 change (95% CI) |" in text
    assert "| 2,500 / 40 | 1 / 0 of 12 |" in text
    assert "1 encrypted run(s), the worst 2,500 ms; the server counted 7 waits for a free" in text
    assert "Not in a steady state: at 4 threads" in text


def test_runs_without_series_report_as_before() -> None:
    data = at_rest.build(rounds_of([(90, 100)] * 12), PROFILE, None, {"cpu": {"cores": 2}})
    cell = data.cells[0]
    assert cell.series is None and "latency_p99_ms" not in cell.comparisons
    assert "series" not in cell.model_dump() and "p99" not in report_md(data)
