"""PostgreSQL in `encbench estimate`: its counters' statement and parse, the rates between
two readings (the reader's own session out, a restart refused), the estimate's arithmetic
with the filesystem layer's units, and the same from postgres_exporter's series (the fleet
and the recording rules)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from encbench import proc
from encbench.errors import BadInput, EncbenchError
from encbench.estimate import kind_fleet, kind_target, kinds, model, rules, units
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Sample
from encbench.estimate.rescale import Resolved
from encbench.servers import server_kind
from encbench.servers.postgresql import counters as pg_counters
from encbench.servers.postgresql import estimate as pg_part
from encbench.servers.postgresql.counters import Snapshot
from tests import estimate_helpers
from tests.helpers import encbench_here, skip_unless_ci

PART = kinds.of("postgresql")
assert PART is not None
KIND = server_kind.named("postgresql")


def test_postgresqls_ways_give_its_part_of_the_estimate() -> None:
    part: kinds.KindEstimate = pg_part  # the module is the part: its type is checked here
    assert PART is part and isinstance(part, kinds.KindEstimate)
    assert "postgresql" in kinds.readable()
    assert kinds.others_units() == {"fs_block_read", "fs_block_written"}


def snapshot(**changes: float) -> Snapshot:
    fields: dict[str, float] = {
        "blocks_read": 1000, "blocks_written": 500, "wal_bytes": 8192 * 100, "sessions": 10,
        "transactions": 40, "started_s": 1.7e9, "clients": 5, "clients_tls": 2,
    }  # fmt: skip
    fields |= changes
    return Snapshot(**fields)  # type: ignore[arg-type]


def resolved_units() -> dict[str, Resolved]:
    """typical_pg's units as measured (±20%): fs block read 5 µs, written 8, handshake 2000."""
    found = {}
    for name, u in estimate_helpers.typical_pg().items():
        low, high = u.ci_us
        found[name] = Resolved(unit=u, us=u.us, low_us=low, high_us=high, rescaled=False, how="")
    return found


def test_the_statement_reads_the_views_of_the_servers_version() -> None:
    older = pg_counters.snapshot_sql(150004)
    assert "buffers_checkpoint + buffers_clean + buffers_backend" in older
    assert "pg_stat_io" not in older
    newer = pg_counters.snapshot_sql(170002)
    assert "pg_stat_io" in newer and "buffers_backend" not in newer
    for sql in (older, newer):
        assert "pg_stat_wal" in sql and "sum(sessions)" in sql
        assert "pg_backend_pid()" in sql  # the reader's own connection is not a client's


def test_a_row_parses_and_a_short_one_is_refused() -> None:
    row = ["1000", "500", "819200", "10", "40", "1700000000.25", "5", "2"]
    got = pg_counters.parse(row)
    assert got == snapshot(started_s=1700000000.25)
    with pytest.raises(ValueError, match="8 columns"):
        pg_counters.parse(row[:7])


def test_rates_per_second_with_the_readers_own_session_out() -> None:
    a = snapshot()
    b = snapshot(blocks_read=2000, blocks_written=700, wal_bytes=8192 * 300, sessions=31)
    r = kind_target.interval_rates(PART, a, b, 10.0)
    assert r.pages_read == pytest.approx(100.0)
    assert r.pages_written == pytest.approx(20.0)
    assert r.redo_bytes == pytest.approx(8192 * 20.0)
    assert r.connections == pytest.approx(2.0)  # 21 sessions, one of them the reading's
    quiet = kind_target.interval_rates(PART, a, snapshot(sessions=11), 10.0)
    assert quiet.connections == 0.0  # only the reading's own
    with pytest.raises(EncbenchError, match="restarted"):
        kind_target.interval_rates(PART, a, snapshot(started_s=1.8e9), 10.0)


def test_the_estimate_is_rate_times_the_filesystem_layers_unit() -> None:
    a = snapshot()
    b = snapshot(blocks_read=2000, blocks_written=700, wal_bytes=8192 * 300, sessions=31)
    intervals = [kind_target.interval_rates(PART, a, b, 10.0)]
    e = kind_target.estimate_of(PART, intervals, resolved_units(), "tables")
    by_key = {c.key: c for c in e.causes}
    # 100 blocks/s × 5 µs, 20 × 8 µs, 2 connections/s × 2000 µs.
    assert by_key["table_reads"].cores is not None
    assert by_key["table_reads"].cores.value == pytest.approx(100 * 5e-6)
    assert by_key["table_writes"].cores is not None
    assert by_key["table_writes"].cores.value == pytest.approx(20 * 8e-6)
    assert by_key["tls_handshakes"].cores is not None
    assert by_key["tls_handshakes"].cores.value == pytest.approx(2 * 2000e-6)
    assert by_key["table_reads"].unit_name == "fs_block_read"
    # The WAL: 20 blocks/s at the written unit, counted under scope all only.
    assert not by_key["redo_log"].in_scope
    assert by_key["redo_log"].cores is not None
    assert by_key["redo_log"].cores.value == pytest.approx(20 * 8e-6)
    assert by_key["tls_bytes"].cores is None
    assert "does not count bytes per connection" in by_key["tls_bytes"].missing
    assert "no binary log" in by_key["binary_log"].missing
    assert e.total.cores is not None
    assert e.total.cores.value == pytest.approx(100 * 5e-6 + 20 * 8e-6 + 2 * 2000e-6)
    scoped_all = model.estimate(intervals, resolved_units(), "all", kinds.causes(PART))
    assert scoped_all.total.cores is not None
    assert scoped_all.total.cores.value == pytest.approx(e.total.cores.value + 20 * 8e-6)


def test_the_window_is_read_every_ten_seconds_with_its_progress() -> None:
    readings = iter(
        [snapshot(), snapshot(blocks_read=1500, sessions=12), snapshot(blocks_read=1600)]
    )
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    said: list[str] = []
    window = kind_target.sample_window(
        PART, lambda: next(readings), 20, {"ssl": "on"}, said.append, lambda: now[0], sleep
    )
    assert [r.pages_read for r in window.intervals] == [50.0, 10.0]
    assert window.seconds == 20.0
    assert window.variables["clients_tls"] == "2"
    assert len(said) == 2 and "50 blocks read/s" in said[0]
    assert PART.on_now(window.variables)["tls_handshakes"].startswith("2 of 5")
    assert PART.on_now({"ssl": "off"})["tls_bytes"] == "no (ssl = off)"


ASKED = Asked(end=1.7e9, since_s=20.0, step_s=10.0)


def _answers(name: str) -> dict[str, list[Sample]]:
    values = {"pages_read": 100.0, "pages_written": 20.0, "connections": 2.0}
    found: dict[str, list[Sample]] = {}
    for field, value in values.items():
        for statistic, share in (("mean", 1.0), ("low", 0.5), ("high", 1.5), ("peak", 1.4)):
            found[f"postgresql:{statistic}:{field}"] = [Sample({"instance": name}, value * share)]
    found["postgresql:windows"] = [Sample({"instance": name}, 2.0)]
    found["postgresql:unreachable"] = [Sample({"instance": name}, 0.0)]
    found["postgresql:variable:ssl"] = [Sample({"instance": name}, 1.0)]
    found["postgresql:version"] = [Sample({"instance": name, "short_version": "15.18.0"}, 1.0)]
    return found


def test_the_exporters_series_make_the_same_estimate() -> None:
    asked = kind_fleet.queries(KIND, PART, ASKED)
    assert all(name.startswith("postgresql:") for name in asked)
    assert "pg_stat_database_blks_read" in asked["postgresql:mean:pages_read"]
    assert "pg_stat_bgwriter_buffers_backend_total" in asked["postgresql:high:pages_written"]
    assert "pg_stat_database_sessions" in asked["postgresql:peak:connections"]
    [(kind, found)] = kind_fleet.estimates(_answers("db1:9187"), ASKED, resolved_units(), "tables")
    assert kind == "postgresql" and found.server == "PostgreSQL 15.18.0"
    assert found.notes == []
    by_key = {c.key: c for c in found.mean.causes}
    assert by_key["table_reads"].cores is not None
    assert by_key["table_reads"].cores.value == pytest.approx(100 * 5e-6)
    # Its interval: the quietest step window × the unit's low end, the busiest × its high.
    assert by_key["table_reads"].cores.low == pytest.approx(50 * 4e-6)
    assert by_key["table_reads"].cores.high == pytest.approx(150 * 6e-6)
    assert "pg_stat_wal" in by_key["redo_log"].missing
    assert "bytes per connection" in by_key["tls_bytes"].missing
    assert found.mean.total.cores is not None
    assert found.mean.total.cores.value == pytest.approx(100 * 5e-6 + 20 * 8e-6 + 2 * 2000e-6)
    assert found.peak.total.cores is not None
    assert found.peak.total.cores.value == pytest.approx(1.4 * found.mean.total.cores.value)


def test_an_exporter_that_reported_half_the_window_is_said() -> None:
    answers = _answers("db1:9187")
    answers["postgresql:windows"] = [Sample({"instance": "db1:9187"}, 1.0)]
    answers["postgresql:unreachable"] = [Sample({"instance": "db1:9187"}, 1.0)]
    [(_, found)] = kind_fleet.estimates(answers, ASKED, resolved_units(), "tables")
    assert any("1 of the window's 2 step windows" in n for n in found.notes)
    assert any("pg_up 0" in n for n in found.notes)


def test_the_rules_record_postgresqls_causes_apart_from_mariadbs() -> None:
    stored = estimate_helpers.typical_pg()
    lines, recorded = rules.kind_lines(stored, "5m", 'job="pg"', "tables", "host")
    text = "\n".join(lines)
    assert recorded == ["table_reads", "table_writes", "tls_handshakes"]
    assert 'rate(pg_stat_database_blks_read{job=\\"pg\\"}[5m])' in text
    assert text.count("kind: postgresql") == 9  # three causes × three bounds
    assert "* 5e-06" in text and "* 4e-06" in text and "* 6e-06" in text
    without = {k: v for k, v in stored.items() if k != "fs_block_read"}
    lines, recorded = rules.kind_lines(without, "5m", "", "tables", "host")
    assert "table_reads" not in recorded
    assert any("not recorded" in line for line in lines)


PG_TEST = """\
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # 600 blocks read a minute over two databases (10/s), 120 sessions a minute (2/s);
      # 600 pages read a minute by a MariaDB beside it.
      - series: 'pg_stat_database_blks_read{instance="pg1:9187",datname="a"}'
        values: '0+300x20'
      - series: 'pg_stat_database_blks_read{instance="pg1:9187",datname="b"}'
        values: '0+300x20'
      - series: 'pg_stat_database_sessions{instance="pg1:9187",datname="a"}'
        values: '0+120x20'
      - series: 'mysql_global_status_innodb_pages_read{instance="db1:9104"}'
        values: '0+600x20'
    alert_rule_test: []
    promql_expr_test:
      # In nano-cores: 10 blocks/s × 5 µs (4–6) = 50,000 (40,000–60,000).
      - expr: round(1e9 * instance:encbench_extra_cores_table_reads:rate5m{instance="pg1:9187"})
        eval_time: 10m
        exp_samples:
          - {labels: '{bound="estimate",instance="pg1:9187",kind="postgresql"}', value: 50000}
          - {labels: '{bound="low",instance="pg1:9187",kind="postgresql"}', value: 40000}
          - {labels: '{bound="high",instance="pg1:9187",kind="postgresql"}', value: 60000}
      # The total adds both kinds, each per instance: + 2 sessions/s × 2000 µs for pg1.
      - expr: round(1e9 * instance:encbench_extra_cores:rate5m{bound="estimate"})
        eval_time: 10m
        exp_samples:
          - {labels: '{bound="estimate",instance="pg1:9187"}', value: 4050000}
          - {labels: '{bound="estimate",instance="db1:9104"}', value: 100000}
"""


def test_promtool_evaluates_postgresqls_rules_to_the_models_number(tmp_path: Path) -> None:
    promtool = proc.which("promtool")
    if promtool is None:
        skip_unless_ci("promtool not installed: run scripts/setup-test-extras.sh")
    assert promtool is not None
    stored = estimate_helpers.typical_pg()

    def postgresql(host: str) -> tuple[list[str], list[str]]:
        return rules.kind_lines(stored, "5m", "", "tables", host)

    text = rules.render(stored, "5m", "", "tables", host="here", more=postgresql)
    (tmp_path / "rules.yml").write_text(text)
    checked = subprocess.run(
        [promtool, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (tmp_path / "test.yml").write_text(PG_TEST)
    tested = subprocess.run(
        [promtool, "test", "rules", "test.yml"], capture_output=True, text=True, cwd=tmp_path
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--target", "postgresql://u:secret@db/"], "the DSN holds a password"),
        (
            ["--target", "postgresql://u@db/", "--defaults-extra-file", "f"],
            "MariaDB's option file",
        ),
        (["--target", "postgresql://u@127.0.0.1:1/"], "check the target's host and port"),
    ],
)
def test_bad_input_is_one_line_with_the_fix(args: list[str], words: str, state_dir: Path) -> None:
    units.write_machine(estimate_helpers.typical_pg())
    result = encbench_here("estimate", *args, env={"PGPASSWORD": "x"})
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    assert "Traceback" not in result.stderr


def test_a_target_of_a_kind_the_estimate_does_not_read_is_refused_with_those_it_reads() -> None:
    from encbench.estimate import command
    from tests.servers import test_new_kind

    server_kind.register_kinds((*server_kind.KINDS, test_new_kind.TOY_KIND))
    try:
        assert kinds.readable() == ["mariadb", "postgresql"]  # the toy's ways give no part
        with pytest.raises(BadInput) as refused:
            command.Options(target="toydb://u@db/").spec()
    finally:
        server_kind.register_kinds(server_kind.KINDS)
    assert str(refused.value) == (
        "--target: the estimate reads MariaDB's and PostgreSQL's counters, not ToyDB's; give "
        "a mysql:// or postgresql://USER@HOST:PORT/ target"
    )
