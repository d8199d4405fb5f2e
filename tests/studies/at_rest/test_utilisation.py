"""The at-rest report's CPU utilisation table: the server's CPU as a share of the instance,
each side with the interval of its mean, and the paired change in points."""

from __future__ import annotations

import dataclasses

from encbench.profiles import profile
from encbench.results.schema import Usage
from encbench.studies.at_rest import section
from encbench.studies.at_rest import summary as at_rest
from encbench.studies.at_rest.records import CellKey, RunRecord
from tests.report.test_html_report import GOLDEN, synthetic_runs


def _with_usage(run: RunRecord, allowed: float | None = None) -> RunRecord:
    # One second of server CPU window, so that server_cpu_s is the cores it used.
    usage = Usage(cores=2.0, cores_busy=1.5, server_cores_allowed=allowed)
    return dataclasses.replace(run, cpu_window_s=1.0, usage=usage)


def test_utilisation_is_a_share_of_the_instance() -> None:
    run = synthetic_runs({CellKey("oltp_read_only", "in-memory", 4): (1, 0.1, 0.0)})[0]
    assert run.cpu_util_pct is None  # no usage recorded: not guessed
    measured = _with_usage(run)
    assert run.server_cpu_s is not None
    assert measured.cpu_util_pct == 100.0 * run.server_cpu_s / 2.0
    assert _with_usage(run, allowed=0.5).cpu_util_pct == 100.0 * run.server_cpu_s / 0.5


def test_the_table_gives_both_levels_and_the_change_in_points() -> None:
    cells = {CellKey("oltp_read_only", "in-memory", t): (16, 0.08, 0.01) for t in (1, 4)}
    runs = [_with_usage(r) for r in synthetic_runs(cells)]
    prof = profile.parse((GOLDEN / "profile.toml").read_text(), "profile.toml")
    part = at_rest.build(runs, prof, None, None)
    measured = [c for c in part.cells if c.rounds]
    table = section.utilisation_table(measured)
    assert table is not None and len(table.rows) == 2
    for cell, row in zip(measured, table.rows, strict=True):
        assert cell.variants is not None
        plain = cell.variants.plain.cpu_util_pct
        comp = cell.comparisons["cpu_util_pct"]
        assert plain is not None
        points = comp.overhead_pct * plain.mean / 100.0
        assert row[3].text.startswith(f"{points:+.1f} (")
        assert row[2].text.startswith(f"{plain.mean:.1f} (")


def test_runs_without_usage_have_no_table() -> None:
    cells = {CellKey("oltp_read_only", "in-memory", 1): (16, 0.08, 0.01)}
    prof = profile.parse((GOLDEN / "profile.toml").read_text(), "profile.toml")
    part = at_rest.build(synthetic_runs(cells), prof, None, None)
    assert section.utilisation_table(part.cells) is None


def test_a_group_never_measured_says_why_its_cells_were_not() -> None:
    from encbench.studies.at_rest.models import AtRestCell

    skipped = AtRestCell(
        workload="oltp_read_only",
        regime="io-bound",
        threads=1,
        rounds=0,
        measured_s=0.0,
        status="not measured: the buffer pool holds all the data",
    )
    pending = skipped.model_copy(update={"regime": "in-memory", "status": "not measured"})
    lines = section.summary_in_words(
        {("oltp_read_only", "io-bound"): [skipped], ("oltp_read_only", "in-memory"): [pending]}
    )
    assert lines == [
        "**oltp_read_only, io-bound**: not measured: the buffer pool holds all the data.",
        "**oltp_read_only, in-memory**: not measured yet.",
    ]
