"""`encbench estimate --rules`: recording rules that promtool accepts and that, evaluated by
promtool over a synthetic series, give the model's number; each commented with its unit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from encbench import proc
from encbench.estimate import rules
from tests import estimate_helpers
from tests.helpers import encbench_here, skip_unless_ci
from tests.test_cli_bad_input import assert_one_line_error

TEST = """\
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # 600 pages a minute: 10 pages read per second
      - series: 'mysql_global_status_innodb_pages_read{instance="db1:9104",job="mysql"}'
        values: '0+600x20'
      - series: 'mysql_global_status_innodb_pages_read{instance="db2:9104",job="other"}'
        values: '0+600x20'
    alert_rule_test: []
    promql_expr_test:
      # Each bound in nano-cores, rounded: 10 pages/s × 10 µs (8–12) = 100,000 (80,000–120,000).
      - expr: round(1e9 * instance:encbench_extra_cores_table_reads:rate5m)
        eval_time: 10m
        exp_samples:
          - {labels: '{bound="estimate",instance="db1:9104"}', value: 100000}
          - {labels: '{bound="low",instance="db1:9104"}', value: 80000}
          - {labels: '{bound="high",instance="db1:9104"}', value: 120000}
      - expr: round(1e9 * instance:encbench_extra_cores:rate5m{bound="estimate"})
        eval_time: 10m
        exp_samples:
          - {labels: '{bound="estimate",instance="db1:9104"}', value: 100000}
"""


def _promtool() -> str:
    found = proc.which("promtool")
    if found is None:
        skip_unless_ci("promtool not installed: run scripts/setup-test-extras.sh")
    assert found is not None
    return found


def test_the_rules_are_commented_with_their_units_and_give_the_models_number(
    tmp_path: Path,
) -> None:
    promtool = _promtool()
    text = rules.render(estimate_helpers.typical(), "5m", 'job="mysql"', "tables", host="here")
    assert text.count("# unit: ") == 5 + 1  # every cause; the log unit serves two
    assert "measured on here on 2026-01-01, from /nonexistent" in text
    (tmp_path / "rules.yml").write_text(text)
    checked = subprocess.run(
        [promtool, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (tmp_path / "test.yml").write_text(TEST)
    tested = subprocess.run(
        [promtool, "test", "rules", "test.yml"], capture_output=True, text=True, cwd=tmp_path
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_a_unit_not_stored_is_said_not_recorded() -> None:
    stored = estimate_helpers.typical()
    del stored["handshake"]
    text = rules.render(stored, "5m", "", "all", host="here")
    assert "not recorded: no extra server CPU per new connection" in text
    assert "encbench_extra_cores_tls_handshakes" not in text
    assert "redo_log|binary_log" in text  # scope all adds the logs to the total


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--rules", "--since", "7d"), "leave out --since"),
        (("--rules", "--prometheus", "http://x"), "leave out --prometheus"),
        (("--rules", "--step", "five"), "--step 'five'"),
    ],
)
def test_bad_input_is_one_line(args: tuple[str, ...], fragment: str) -> None:
    assert_one_line_error(encbench_here("estimate", *args), fragment)
