"""The parser against the real sysbench 1.0.20's own output (tests/golden/sysbench/)."""

from pathlib import Path

import pytest

from encbench.errors import ToolError
from encbench.servers.postgresql.sysbench import socket_connection
from encbench.servers.target import Connection
from encbench.workloads import sysbench
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "sysbench"


def test_reads_every_figure_of_a_read_only_report() -> None:
    result = sysbench.parse_report((GOLDEN / "oltp_read_only_4threads.txt").read_text())
    assert result.threads == 4
    assert result.transactions == 3486
    assert result.tps == pytest.approx(696.44)
    assert result.queries == 55776
    assert result.qps == pytest.approx(11142.99)
    assert result.ignored_errors == 0
    assert result.reconnects == 0
    assert result.total_time_s == pytest.approx(5.0050)
    assert result.latency_min_ms == pytest.approx(2.55)
    assert result.latency_avg_ms == pytest.approx(5.74)
    assert result.latency_max_ms == pytest.approx(13.06)
    assert result.latency_p95_ms == pytest.approx(7.56)


def test_a_records_fields_of_a_report_are_its_own_figures_under_the_records_names() -> None:
    """Both records of a sysbench run (at rest's, replication's) take these as they are."""
    from encbench.studies.at_rest.records import RunRecord
    from encbench.studies.replication.records import ReplicationRecord

    result = sysbench.parse_report((GOLDEN / "oltp_read_only_4threads.txt").read_text())
    fields = result.record_fields()
    assert fields == {name: getattr(result, name) for name in fields}
    assert fields["tps"] == pytest.approx(696.44)
    for record in (RunRecord, ReplicationRecord):
        assert set(fields) <= set(record.__dataclass_fields__), record


@pytest.mark.parametrize(
    ("name", "threads"),
    [
        ("oltp_point_select_2threads.txt", 2),
        ("oltp_read_write_2threads.txt", 2),
        ("oltp_write_only_2threads.txt", 2),
        ("oltp_update_index_2threads.txt", 2),
    ],
)
def test_parses_the_report_of_every_stock_oltp_script(name: str, threads: int) -> None:
    result = sysbench.parse_report((GOLDEN / name).read_text())
    assert result.threads == threads
    assert result.transactions > 0
    # sysbench's own rate is its count over its own total time.
    assert result.tps == pytest.approx(result.transactions / result.total_time_s, rel=0.01)
    assert result.latency_min_ms <= result.latency_avg_ms <= result.latency_max_ms
    assert result.latency_p95_ms <= result.latency_max_ms


def test_write_only_report_counts_writes_not_reads() -> None:
    text = (GOLDEN / "oltp_write_only_2threads.txt").read_text()
    assert "read:                            0" in text
    assert sysbench.parse_report(text).transactions == 2489


def test_a_failed_run_names_sysbenchs_first_fatal_line() -> None:
    with pytest.raises(ToolError, match="unable to connect to MySQL server on socket"):
        sysbench.parse_report((GOLDEN / "error_no_server.txt").read_text())


def test_run_command_uses_the_stock_script_and_no_password() -> None:
    conn = Connection.unix(Path("/tmp/s.sock"), "root", "sbtest")
    argv = sysbench.command(
        conn,
        "oltp_read_only",
        threads=8,
        time_s=5,
        options=sysbench.oltp_options(4, 1000, "uniform"),
    )
    assert argv[-2:] == ["oltp_read_only", "run"]
    assert "--mysql-socket=/tmp/s.sock" in argv
    assert not any(a.startswith(("--mysql-host", "--mysql-ssl")) for a in argv)
    assert "--threads=8" in argv
    assert "--time=5" in argv
    assert "--rand-type=uniform" in argv
    assert not any(a.startswith("--mysql-password") for a in argv)


def test_a_postgresql_connection_speaks_sysbenchs_pgsql_driver_over_its_socket_directory() -> None:
    conn = socket_connection(Path("/tmp/encbench-x"), 5433, "encbench_admin", "encbench")
    argv = sysbench.command(conn, "oltp_read_only", threads=2, time_s=1)
    assert argv[1:6] == [
        "--db-driver=pgsql",
        "--pgsql-host=/tmp/encbench-x",
        "--pgsql-port=5433",
        "--pgsql-user=encbench_admin",
        "--pgsql-db=encbench",
    ]
    assert not any(a.startswith(("--mysql", "--pgsql-password")) for a in argv)


def test_one_wrapper_speaks_tcp_with_or_without_tls_for_any_script() -> None:
    conn = Connection.tcp("10.0.0.2", 3307, "bench", "sbtest")
    plain = sysbench.command(conn, "oltp_point_select", threads=2, time_s=1)
    encrypted = sysbench.command(conn, "oltp_point_select", threads=2, time_s=1, tls=True)
    assert "--mysql-host=10.0.0.2" in plain and "--mysql-port=3307" in plain
    assert "--mysql-ssl=off" in plain and "--mysql-ssl=on" in encrypted
    assert not any(a.startswith("--mysql-socket") for a in plain)


def test_prepare_has_a_fixed_seed_and_no_run_options() -> None:
    conn = Connection.unix(Path("/tmp/s.sock"), "root", "sbtest")
    argv = sysbench.command(
        conn, "oltp_read_only", threads=4, time_s=0, options=["--rand-seed=1"], action="prepare"
    )
    assert argv[-2:] == ["oltp_read_only", "prepare"] and "--rand-seed=1" in argv
    assert not any(a.startswith(("--time", "--events", "--percentile")) for a in argv)


def test_the_window_hook_gives_the_earliest_loop_start_and_the_latest_end() -> None:
    out = (GOLDEN / "window_oltp_point_select_2threads.txt").read_text()
    window = sysbench.parse_window(out, threads=2)
    assert window.start_ns == 963767995219
    assert window.end_ns == 964768113630
    assert (window.start_counter, window.end_counter) == (116667253, 731863098)
    assert window.wall_s == pytest.approx(1.0, abs=0.01)
    # the report around the marks still parses as before
    assert sysbench.parse_report(out).transactions > 0


def test_a_window_missing_a_threads_marks_is_refused() -> None:
    out = (GOLDEN / "window_oltp_point_select_2threads.txt").read_text()
    with pytest.raises(ToolError, match="marked 1 loop starts and 2 ends for 2 threads"):
        sysbench.parse_window(out.replace("encbench-window start 0", "start 0"), threads=2)


def test_a_run_with_series_keeps_its_seconds_and_its_p99_from_the_histogram() -> None:
    """A real windowed oltp_write_only run with --report-interval=1 --histogram=on (the
    steady write design): each second's TPS and p95, and the 99th percentile read from the
    histogram as sysbench reads its own percentile."""
    text = (GOLDEN / "window_series_oltp_write_only_16threads.txt").read_text()
    seconds = sysbench.seconds(text)
    assert [s.at for s in seconds] == list(range(1, len(seconds) + 1))
    assert len(seconds) >= 19  # a 20 s run; its last second may end after the last report
    assert seconds[0] == sysbench.Second(1, 754.22, 47.47)
    result = sysbench.parse_report(text)
    p95 = sysbench.histogram_percentile(text, 95.0)
    p99 = sysbench.histogram_percentile(text, 99.0)
    assert p95 is not None and p99 is not None
    # the histogram's 95th is sysbench's own 95th percentile line, to its two decimals
    assert p95 == pytest.approx(result.latency_p95_ms, abs=0.01)
    assert result.latency_p95_ms < p99 <= result.latency_max_ms
    assert (
        sysbench.histogram_percentile((GOLDEN / "oltp_read_only_4threads.txt").read_text(), 99.0)
        is None
    )


def test_an_invocation_with_series_asks_for_them_and_its_result_carries_them(
    tmp_path: Path,
) -> None:
    conn = Connection(user="root", database="sbtest", socket=tmp_path / "s.sock")
    plain = sysbench.invocation(conn, "oltp_write_only", threads=16, time_s=20, log=tmp_path / "l")
    assert "--report-interval=1" not in plain.argv and "--histogram=on" not in plain.argv
    made = sysbench.invocation(
        conn, "oltp_write_only", threads=16, time_s=20, log=tmp_path / "l", series=True
    )
    assert "--report-interval=1" in made.argv and "--histogram=on" in made.argv
    text = (GOLDEN / "window_series_oltp_write_only_16threads.txt").read_text()
    result = made.result(0, text)
    assert len(result.per_second) >= 19 and result.latency_p99_ms is not None
    assert plain.result(0, text).per_second == ()
