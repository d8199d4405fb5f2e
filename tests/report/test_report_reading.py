"""What a report must not let a reader misread: one sign for every cost, verdicts that agree
with their cost column, the cells that survive Holm's adjustment named and marked, an
encrypted side that came out faster flagged, no verdict where there is no interval, and the
key to all of it before the first table."""

from __future__ import annotations

import math
import re
from typing import Any

from encbench import stats
from encbench.commands import rendering
from encbench.engine import stopping_rule
from encbench.profiles import profile
from encbench.report import calibration, documents, markdown
from encbench.report.models import CalibrationCell, NoiseFloor, Summary
from encbench.studies.at_rest import summary as at_rest
from encbench.studies.at_rest.models import AtRestCell
from encbench.studies.at_rest.records import CellKey
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.in_transit import summary as in_transit
from tests.report.test_html_report import golden_summary, render_html, synthetic_runs
from tests.studies.in_transit.test_transit_plan_and_report import record as transit_record

PROFILE = profile.parse(
    'name = "t"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["in-memory"]\n'
    "threads = [1, 4, 16, 64]\nmin_rounds = 12\nmax_rounds = 40\ncell_budget_s = 1000\n",
    "t.toml",
)


def cell(threads: int) -> CellKey:
    return CellKey("oltp_read_only", "in-memory", threads)


Effects = dict[CellKey, tuple[int, float, float]]  # cell → rounds, cost, noise


def summary_of(effects: Effects, noise: NoiseFloor | None = None) -> Summary:
    part = at_rest.build(synthetic_runs(effects, seed=5), PROFILE, None, None)
    return documents.summarize("t", None, {"at-rest": part}, noise_floor=noise)


def report(summary: Summary) -> str:
    return markdown.render(rendering.document(summary))


def cells_of(summary: Summary) -> dict[int, AtRestCell]:
    return {c.threads: c for c in summary.part("at-rest").cells}


def row_of(text: str, threads: int) -> str:
    """The throughput table's row of a thread count (the first table with that row)."""
    return next(line for line in text.splitlines() if line.startswith(f"| {threads} | "))


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def noise_floor(halfwidth: float) -> NoiseFloor:
    """A machine calibrated at rest: 20 plain-against-plain cells of the given half-width."""
    cells = [
        CalibrationCell(
            study="at-rest",
            group="oltp_read_only, in-memory",
            label=f"c{i}",
            metric="tps",
            rounds=12,
            a_mean=1.0,
            b_mean=1.0,
            ratio=1.0,
            ci_low=0.99,
            ci_high=1.01,
            halfwidth_pct=halfwidth,
            round_spread_pct=3.0,
            false_positive=i == 0,
        )
        for i in range(20)
    ]
    found = calibration.summarize("aa", cells, measured_at="2026-01-02T03:04:05Z")
    return NoiseFloor(file="calibration.json", latest=found)


# -- one sign ----------------------------------------------------------------------------------
def test_every_verdict_interval_has_the_sign_of_its_cost_column() -> None:
    text = report(golden_summary())
    checked = 0
    for line in text.splitlines():
        # A cost with its interval, then a verdict with a 95% interval in signed form.
        found = re.search(
            r"\| ([-+]\d+\.\d)% \(([-+]\d+\.\d) … ([-+]\d+\.\d)\) \| no difference detected "
            r"\(95% CI ([-+]\d+\.\d)…([-+]\d+\.\d)%\)",
            line,
        )
        if found:
            _, low, high, v_low, v_high = (float(x) for x in found.groups())
            assert (v_low, v_high) == (low, high), line
            checked += 1
    assert checked >= 2  # throughput and CPU of the in-memory 4-thread cell


def test_summary_json_states_the_cost_sign_in_overhead_and_the_ratio_in_ratio() -> None:
    data = golden_summary().to_json()
    for c in data["studies"]["at-rest"]["cells"]:
        tps = c.get("comparisons", {}).get("tps")
        if tps and tps["overhead_ci_pct"]:
            # Fewer TPS encrypted (ratio < 1) is a positive cost, and its interval holds it.
            assert math.copysign(1, tps["overhead_pct"]) == math.copysign(1, 1 - tps["ratio"])
            low, high = tps["overhead_ci_pct"]
            assert low <= tps["overhead_pct"] <= high


# -- no verdict without an interval -------------------------------------------------------------
def test_a_cell_of_eight_rounds_has_no_verdict_and_never_no_difference_detected() -> None:
    summary = summary_of({cell(1): (8, 0.01, 0.02), cell(4): (16, 0.0, 0.02)})
    few = cells_of(summary)[1].comparisons["tps"]
    assert few.kind == "na" and few.overhead_ci_pct is None
    assert few.verdict == "no verdict: 8 rounds, an interval needs 12"
    assert stopping_rule.rounds_for_interval() == 2 * stats.fewest_blocks_for_interval() == 12
    text = report(summary)
    assert "no verdict: 8 rounds, an interval needs 12" in row_of(text, 1)
    assert "no difference" not in row_of(text, 1)
    words = section(text, "Summary").split("Server CPU")[0]
    assert "no verdict at 1 thread (8 rounds; an interval needs 12)" in words
    assert "no difference detected at 1 thread" not in words and "1 and 4" not in words


def test_a_single_round_says_so_in_the_singular() -> None:
    assert stopping_rule.no_verdict(1) == "no verdict: 1 round, an interval needs 12"


# -- Holm ------------------------------------------------------------------------------------------
def test_the_cells_that_survive_holm_are_marked_and_named_and_a_short_one_gets_its_rounds() -> None:
    # Four cells: two large costs over 12 blocks, one over 6 blocks, whose exact test cannot
    # give a p-value below 2/2⁶ = 0.031 where Holm asks 0.05/2 of its third cell, and none.
    summary = summary_of({cell(1): (24, 0.10, 0.01), cell(4): (24, 0.08, 0.01),
                          cell(16): (12, 0.09, 0.01), cell(64): (24, 0.0, 0.01)})  # fmt: skip
    by_threads = cells_of(summary)
    differences = summary.part("at-rest").differences
    assert differences is not None and differences.differ == 3
    survivors = {t for t, c in by_threads.items() if c.comparisons["tps"].differs_holm}
    assert survivors == {1, 4}
    short = next(c for c in differences.holm_cells if not c.survives)
    assert short.cell == "oltp_read_only, in-memory, 16 threads" and short.blocks == 6
    assert short.threshold == 0.05 / 2
    assert stats.p_floor(6) > short.threshold
    assert short.blocks_needed == stats.blocks_to_reach(short.threshold)
    assert stats.p_floor(short.blocks_needed) <= short.threshold
    text = report(summary)
    assert row_of(text, 1).count("†") == 1 and row_of(text, 4).count("†") == 1
    assert "†" not in row_of(text, 16)
    assert "† after a verdict: the cell still differs after Holm's adjustment" in text
    across = section(text, "Summary")
    assert (
        "2 still differ after Holm's adjustment for 4 comparisons (oltp_read_only, in-memory, "
        "1 thread; oltp_read_only, in-memory, 4 threads: marked † in the tables)"
    ) in across
    rounds = 2 * short.blocks_needed
    assert (
        "oltp_read_only, in-memory, 16 threads — with 6 blocks (12 rounds) the exact "
        "signed-rank test cannot give a p-value below 0.0312 and Holm asks 0.025 or less"
    ) in across
    assert f"it needs at least {short.blocks_needed} blocks ({rounds} rounds)" in across


# -- an encrypted side that came out faster -------------------------------------------------------
def test_an_encrypted_server_five_percent_faster_is_flagged_with_its_causes_and_noise() -> None:
    summary = summary_of(
        {cell(1): (16, -0.05, 0.01), cell(4): (16, 0.05, 0.01)}, noise=noise_floor(1.7)
    )
    faster, slower = cells_of(summary)[1], cells_of(summary)[4]
    assert faster.comparisons["tps"].kind == "gain" and faster.comparisons["tps"].implausible_gain
    assert faster.comparisons["cpu_ms_per_txn"].implausible_gain  # 6% less CPU, too
    assert not slower.comparisons["tps"].implausible_gain
    text = report(summary)
    assert re.search(r"\| -5\.\d% \(.*\) \| 5\.\d% faster \(95% CI .*\)( †)? ⚠ \|", row_of(text, 1))
    assert "⚠" not in row_of(text, 4)
    words = section(text, "Summary")
    flagged = next(line for line in words.splitlines() if "Encrypted faster" in line)
    assert "oltp_read_only, in-memory, 1 thread: throughput 5." in flagged
    assert "server process" in flagged and "where they ran" in flagged
    assert "other load during the run" in flagged
    # The machine's noise floor, as the section that states it gives it.
    assert "A/A calibration of 2026-01-02T03:04:05Z" in flagged and "±1.7%" in flagged
    assert "1 of 20 cells (5.0%" in flagged
    assert "4 threads" not in flagged


def test_without_a_calibration_the_flag_says_the_noise_floor_is_unknown() -> None:
    text = report(summary_of({cell(1): (16, -0.05, 0.01)}))
    flagged = next(line for line in text.splitlines() if "Encrypted faster" in line)
    assert "noise floor is unknown: `encbench calibrate` measures it" in flagged


def _transit_faster(transit: str, plain_rate: float, ratio: float) -> tuple[Any, str]:
    """One in-transit cell whose encrypted path runs `ratio` times plain's rate, in 16
    rounds of alternating blocks: its part and the report's words."""
    prof = profile.parse(f'name = "t"\nstudies = ["in-transit"]\n[transit]\n{transit}', "t.toml")
    (cell,) = transit_cells.cells(prof)
    runs = []
    for n in range(16):
        plain = plain_rate * (1 + 0.01 * (n % 3))
        first = n % 2  # blocks: plain first, then encrypted first
        runs.append(transit_record(cell, n, "plain", plain, position=first))
        runs.append(transit_record(cell, n, "encrypted", plain * ratio, position=1 - first))
    part = in_transit.build(runs, prof, {"proofs": {}, "skipped": {}, "pki": {}})
    text = markdown.render(rendering.document(documents.summarize("t", None, {"in-transit": part})))
    return part, text


def test_an_encrypted_path_faster_in_transit_is_flagged_too() -> None:
    part, text = _transit_faster(
        'tests = ["oltp_point_select"]\nkey_types = ["rsa2048"]\nmethods = ["tls"]\n'
        "query_threads = [4]\nmin_rounds = 12\n",
        1000.0,
        1.05,
    )
    assert part.cells[0].comparisons["rate"].implausible_gain
    assert "5.0% faster (95% CI" in text and "⚠" in text
    flagged = next(line for line in text.splitlines() if "Encrypted faster" in line)
    assert "client processes and connections" in flagged
    assert "tunnel across a distance" not in flagged  # a TLS cell on loopback


def test_a_tunnel_faster_across_a_distance_is_said_to_save_a_round_trip() -> None:
    _, text = _transit_faster(
        'tests = ["connect"]\nmethods = ["ssh"]\nconnect_threads = [1]\nrtt_ms = [40]\n'
        "min_rounds = 12\n",
        6.0,
        1.3,
    )
    flagged = next(line for line in text.splitlines() if "Encrypted faster" in line)
    assert "for a tunnel across a distance, the path itself" in flagged
    assert "a round trip fewer per connection" in flagged


# -- the key before the first table --------------------------------------------------------------
def test_reading_this_report_comes_first_in_markdown_and_html() -> None:
    summary = golden_summary()
    text = report(summary)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Reading this report", "## Summary"]
    reading = section(text, "Reading this report")
    for word in ("**cell**", "**round**", "**block**", "**interval**", "**verdict**"):
        assert word in reading
    assert "Positive means the encrypted side is worse" in reading
    assert "an interval needs 12" in reading
    page = render_html(summary)
    assert page.index("<h2>Reading this report</h2>") < page.index("<h2>Summary</h2>")
    assert 'class="legend"' in page.split("<h2>Summary</h2>")[0]


def test_connection_setup_is_said_to_be_per_new_connection_and_what_a_pool_pays() -> None:
    prof = profile.parse(
        'name = "t"\nstudies = ["in-transit"]\n[transit]\ntests = ["connect"]\n'
        'key_types = ["rsa2048"]\nmethods = ["tls"]\nconnect_threads = [1]\nmin_rounds = 2\n',
        "t.toml",
    )
    (connect,) = transit_cells.cells(prof)
    runs = [
        transit_record(connect, n, v, 1000.0 if v == "plain" else 100.0)
        for n in range(2)
        for v in ("plain", "encrypted")
    ]
    part = in_transit.build(runs, prof, {"proofs": {}, "skipped": {}, "pki": {}})
    text = markdown.render(rendering.document(documents.summarize("t", None, {"in-transit": part})))
    assert "### Connection setup per new connection over loopback" in text
    assert "a connection pool" in text and "pays the handshake once per connection" in text


def test_no_line_a_user_reads_says_seed() -> None:
    text = report(golden_summary()) + render_html(golden_summary())
    assert "seed" not in text.lower()
