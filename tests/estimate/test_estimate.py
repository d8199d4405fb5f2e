"""`encbench estimate`: unit costs from a directory's runs and this machine's state, the
window of counters, the model (rates × units, with intervals), the rescaling of the cipher's
part, the report, and the check of the model against runs whose true costs are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from encbench.errors import BadInput, EncbenchError
from encbench.estimate import counters, kinds, model, rescale, units, validate
from encbench.estimate import report as estimate_report
from encbench.estimate.counters import Rates
from encbench.estimate.rescale import Resolved
from encbench.results.store import ResultStore
from tests import estimate_helpers, estimate_runs
from tests.helpers import encbench_here

# -- units ---------------------------------------------------------------------------------


def test_units_from_a_directory_recover_the_costs_its_runs_were_made_with(tmp_path: Path) -> None:
    exact = estimate_runs.Truth(noise=0.0)
    found = units.from_directory(estimate_runs.directory(tmp_path / "exact", exact))
    assert found.units["page_read"].us == pytest.approx(exact.read_us)
    assert found.units["page_written"].us == pytest.approx(exact.write_us)
    truth = estimate_runs.Truth()
    found = units.from_directory(estimate_runs.directory(tmp_path / "r", truth))
    assert found.missing == {}
    expected = {
        "page_read": truth.read_us,
        "page_written": truth.write_us,  # its reads taken out at the page-read cost
        "handshake": truth.handshake_us,
        "tls_mib": truth.mib_us,
    }
    for name, us in expected.items():
        unit = found.units[name]
        assert unit.ci_us[0] < unit.us < unit.ci_us[1], (name, unit)
        assert unit.us == pytest.approx(us, rel=0.02)
        assert unit.kind == "measured" and unit.source == str((tmp_path / "r").resolve())
        assert unit.measured_on == "2026-02-03"
    assert found.units["page_read"].rounds == 36  # 3 io-bound read cells × 12 rounds
    assert found.units["handshake"].configuration == "rsa2048, TLSv1.3 TLS_AES_256_GCM_SHA384"
    # The page units carry the run's cipher floor: 16384 B at 6000 MB/s = 2.73 µs.
    assert found.units["page_read"].cipher_us == pytest.approx(16384 / 6000.0)
    assert found.units["handshake"].cipher_us is None
    log = found.units["log_mib"]
    # 2^20 B at 6000 MB/s (10^6 B/s): 174.76 µs, the cipher alone.
    assert log.kind == "cipher only" and log.us == pytest.approx((1 << 20) / 6000.0)


def test_a_unit_that_varies_with_concurrency_has_an_interval_over_every_cell(
    tmp_path: Path,
) -> None:
    truth = estimate_runs.Truth(read_us_by_threads={1: 13.0, 4: 10.0, 16: 9.0})
    unit = units.from_directory(estimate_runs.directory(tmp_path / "r", truth)).units["page_read"]
    # Over all 36 rounds the t interval is narrow; the span of the cells' means is not.
    assert unit.ci_us[0] <= 9.0 * 1.01 and unit.ci_us[1] >= 13.0 * 0.99
    assert unit.ci_us[0] < unit.us < unit.ci_us[1]


def test_a_units_interval_holds_each_cells_own_interval_above_the_ciphers_floor(
    tmp_path: Path,
) -> None:
    # Noisy rounds: each cell's own interval is wider than the span of the cells' means.
    truth = estimate_runs.Truth(read_us_by_threads={1: 13.0, 4: 10.0, 16: 9.0}, noise=0.15)
    found = units.from_directory(estimate_runs.directory(tmp_path / "r", truth))
    unit = found.units["page_read"]
    source = units.at_rest_runs(*units.open_directory(found.directory))
    for cell in units.page_read_cells(source):
        low, high = units.cell_interval(cell.values)
        assert unit.ci_us[0] <= max(low, unit.cipher_us or 0.0) and high <= unit.ci_us[1]
    assert unit.ci_us[1] > 13.0 * 1.01  # wider than the span of the means
    assert unit.cipher_us is not None and unit.ci_us[0] >= unit.cipher_us


def test_in_a_duet_the_units_intervals_are_over_blocks_where_the_cpus_cancel(
    tmp_path: Path,
) -> None:
    # Each server pays 30% more on the first CPU, the two swapping every round: a round's
    # extra CPU swings far above and below the truth, a block's does not.
    truth = estimate_runs.Truth(duet_bias=0.3, noise=0.005)
    found = units.from_directory(estimate_runs.directory(tmp_path / "r", truth))
    source = units.at_rest_runs(*units.open_directory(found.directory))
    cells = units.page_read_cells(source)
    assert cells and all(len(c.blocks) == truth.rounds // 2 for c in cells)
    for cell in cells:
        by_blocks = units.cell_interval(cell.values, cell.blocks)
        by_rounds = units.cell_interval(cell.values)
        assert by_blocks[1] - by_blocks[0] < (by_rounds[1] - by_rounds[0]) / 5
    # A block pays the mean of the two CPUs' prices: the truth at 1 + bias/2.
    paid = truth.read_us * (1 + truth.duet_bias / 2)
    unit = found.units["page_read"]
    assert unit.ci_us[0] <= paid <= unit.ci_us[1]
    assert unit.ci_us[1] - unit.ci_us[0] < 0.2 * paid


def test_a_calibration_or_a_directory_without_units_is_refused(tmp_path: Path) -> None:
    aa = ResultStore.create(tmp_path / "aa", "aa", estimate_runs.PROFILE, calibration=True)
    aa.unlock()
    with pytest.raises(BadInput, match="A/A calibration"):
        units.from_directory(tmp_path / "aa")
    empty = ResultStore.create(tmp_path / "empty", "e", estimate_runs.PROFILE)
    empty.unlock()
    with pytest.raises(BadInput, match=r"no run that gives a unit cost.*--measure-units"):
        units.from_directory(tmp_path / "empty")


def test_stored_units_a_newer_directory_replaces_by_name_and_keeps_the_rest(
    state_dir: Path,
) -> None:
    assert units.read_machine() == {}
    first = estimate_helpers.typical()
    units.write_machine(first)
    newer = estimate_helpers.unit("page_read", 12.0, estimate_helpers.PAGE)
    units.write_machine({"page_read": newer})
    stored = units.read_machine()
    assert stored["page_read"].us == 12.0
    assert stored["handshake"] == first["handshake"]
    units.machine_file().write_text("{ torn")
    assert units.read_machine() == {}


# -- the window ----------------------------------------------------------------------------


class FakeServer:
    """A server whose counters grow by `per_s` per second of a fake clock; its SHOW GLOBAL
    STATUS answers cost the harness 30,000 bytes each (counted in Bytes_sent)."""

    def __init__(self, per_s: dict[str, float]) -> None:
        self.now = 100.0
        self.per_s = per_s
        self.own = 0
        self.answers = 0
        self.variables_read = 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def status(self) -> dict[str, str]:
        self.answers += 1
        self.own += 30_000
        elapsed = self.now - 100.0
        values = {name: int(rate * elapsed) for name, rate in self.per_s.items()}
        values["Uptime"] = int(1000 + elapsed)
        values["Bytes_sent"] = values.get("Bytes_sent", 0) + self.own
        return {k: str(v) for k, v in values.items()}

    def variables(self) -> dict[str, str]:
        self.variables_read += 1
        on = "ON" if self.variables_read > 1 else "OFF"
        return {"version": "10.11.19-MariaDB", "innodb_encrypt_tables": on}

    def own_bytes(self) -> int:
        return self.own


class FakeCpu:
    def __init__(self, server: FakeServer, cores: float) -> None:
        self.server, self.cores = server, cores

    def read_s(self) -> float:
        return self.server.now * self.cores


RATES = {
    "Innodb_pages_read": 1000.0,
    "Innodb_pages_written": 200.0,
    "Connections": 5.0,
    "Bytes_sent": 3 * (1 << 20),
    "Bytes_received": 1 << 20,
    "Innodb_os_log_written": 1 << 20,
    "Ssl_finished_accepts": 1.0,
}


def test_a_window_reads_every_10_s_and_takes_its_own_bytes_out() -> None:
    server = FakeServer(RATES)
    lines: list[str] = []
    window = counters.sample_window(
        kinds.first(),
        server,
        60,
        FakeCpu(server, 1.5),
        "a fake",
        lines.append,
        server.clock,
        server.sleep,
    )
    assert len(window.intervals) == 6 and len(lines) == 6
    assert window.seconds == pytest.approx(60.0)
    first = window.intervals[0]
    assert first.pages_read == pytest.approx(1000.0)
    assert first.connections == pytest.approx(5.0)
    # 4 MiB/s moved; the harness's own 30,000 bytes per reading are not the server's load.
    assert first.bytes == pytest.approx(4 * (1 << 20), rel=1e-3)
    assert first.server_cores == pytest.approx(1.5)
    assert first.binlog_bytes is None  # not counted by this server
    assert "Binlog_bytes_written" in window.missing
    assert window.changed == {"innodb_encrypt_tables": ("OFF", "ON")}
    assert lines[0].startswith("estimate: 10 s of 60: 1,000 pages read/s")
    assert "server CPU 1.50 cores" in lines[0]


def test_a_server_that_restarted_during_the_window_is_said_so() -> None:
    a = counters.Sample(at_s=0, counters={"Uptime": 500}, own_bytes=0, cpu_s=None)
    b = counters.Sample(at_s=10, counters={"Uptime": 3}, own_bytes=0, cpu_s=None)
    with pytest.raises(EncbenchError, match="restarted during the window"):
        counters.interval_rates(kinds.first(), a, b)


@pytest.mark.parametrize("seconds", [0, 5, 90_000])
def test_seconds_out_of_range_are_refused(seconds: int) -> None:
    with pytest.raises(BadInput, match="--seconds"):
        counters.check_seconds(seconds)


# -- the model -----------------------------------------------------------------------------


def rates(pages_read: float, cores: float | None = 2.0, **kw: float | None) -> Rates:
    values: dict[str, float | None] = {
        "seconds": 10.0, "pages_read": pages_read, "pages_written": 0.0,
        "buffer_pool_reads": None, "redo_bytes": 0.0, "binlog_bytes": 0.0,
        "connections": 0.0, "tls_handshakes": 0.0, "bytes": 0.0, "pages_decrypted": None,
        "pages_encrypted": None, "server_cores": cores,
    }  # fmt: skip
    values.update(kw)
    return Rates.model_validate(values)


def resolved(**unit_us: float) -> dict[str, Resolved]:
    found = {}
    for name, us in unit_us.items():
        unit = estimate_helpers.unit(name, us, None)  # type: ignore[arg-type]
        found[name] = validate.as_measured(unit)
    return found


def test_extra_cpu_is_rate_times_unit_its_interval_the_load_and_the_units_ends() -> None:
    # 1,000 and 3,000 pages/s over two equal intervals: mean 2,000; × 10 µs = 0.02 cores.
    # Interval: 1,000 × 8 µs = 0.008 … 3,000 × 12 µs = 0.036.  Server 2 cores: 1% (0.4–1.8%).
    e = model.estimate([rates(1000.0), rates(3000.0)], resolved(page_read=10.0), "tables")
    reads = e.causes[0]
    assert reads.key == "table_reads" and reads.cores is not None and reads.share_pct
    assert (reads.cores.value, reads.cores.low, reads.cores.high) == pytest.approx(
        (0.02, 0.008, 0.036)
    )
    assert (reads.share_pct.value, reads.share_pct.low, reads.share_pct.high) == pytest.approx(
        (1.0, 0.4, 1.8)
    )
    assert e.total.cores is not None and e.total.cores.value == pytest.approx(0.02)
    assert e.dominant == ["table_reads"]


def test_a_totals_interval_takes_all_causes_at_the_same_moment() -> None:
    # Reads busy when connections are quiet and the reverse: the total's ends are the
    # busier moment's, not the sum of each cause's busiest.
    window = [
        rates(3000.0, connections=0.0),
        rates(0.0, connections=10.0),
    ]
    e = model.estimate(window, resolved(page_read=10.0, handshake=2000.0), "tables")
    assert e.total.cores is not None
    # High ends: 3,000 × 12 µs = 0.036 at the first moment, 10 × 2,400 µs = 0.024 at the
    # second; low ends: 3,000 × 8 µs = 0.024, 10 × 1,600 µs = 0.016.  Each cause's own ends
    # summed would give 0 … 0.06.
    assert e.total.cores.high == pytest.approx(0.036)
    assert e.total.cores.low == pytest.approx(0.016)
    assert e.total.cores.value == pytest.approx(0.015 + 0.01)


def test_scope_tables_shows_the_logs_but_leaves_them_out_of_the_total() -> None:
    mib = float(1 << 20)
    window = [rates(0.0, redo_bytes=2 * mib, binlog_bytes=mib / 8)]
    units_ = resolved(page_read=10.0, log_mib=200.0)
    tables = model.estimate(window, units_, "tables")
    redo = {c.key: c for c in tables.causes}["redo_log"]
    assert not redo.in_scope and redo.cores and redo.cores.value == pytest.approx(0.0004)
    assert tables.total.cores is not None and tables.total.cores.value == 0.0
    everything = model.estimate(window, units_, "all")
    assert everything.total.cores is not None
    assert everything.total.cores.value == pytest.approx(0.000425)
    assert everything.dominant == ["redo_log"]


def test_a_cause_without_a_unit_or_a_counter_says_why_and_stays_out_of_the_total() -> None:
    window = [rates(100.0, binlog_bytes=None, connections=4.0)]
    e = model.estimate(window, resolved(page_read=10.0), "all")
    by_key = {c.key: c for c in e.causes}
    assert by_key["binary_log"].missing == "the server does not count Binlog_bytes_written"
    assert by_key["tls_handshakes"].missing.startswith("no unit cost stored")
    assert by_key["tls_handshakes"].rate and by_key["tls_handshakes"].rate.value == 4.0
    assert e.total.causes == ["table_reads"]


def test_a_unit_not_told_from_zero_gives_no_negative_cpu() -> None:
    unit = estimate_helpers.unit("page_read", 2.0, None, spread=3.0)  # −4 … 8 µs
    e = model.estimate([rates(1000.0)], {"page_read": validate.as_measured(unit)}, "tables")
    assert e.causes[0].cores is not None and e.total.cores is not None
    assert e.causes[0].cores.low == 0.0 and e.total.cores.low == 0.0
    assert e.causes[0].cores.high == pytest.approx(0.008)


def test_without_the_servers_cpu_there_is_no_share() -> None:
    e = model.estimate([rates(100.0, cores=None)], resolved(page_read=10.0), "tables")
    assert e.server_cores is None and e.total.share_pct is None


# -- rescaling -----------------------------------------------------------------------------


def speeds(page_mb_per_s: float, sign_per_s: float) -> rescale.Speed:
    """A fake `openssl speed` answering in its -mr form."""

    def run(argv: list[str]) -> str:
        if "-evp" in argv:
            cipher = argv[-1]
            return f"+H:16384\n+F:22:{cipher}:{page_mb_per_s * 1e6}\n"
        return f"+F2:0:2048:{sign_per_s}:{sign_per_s * 10}\n"

    return run


def test_on_another_host_only_the_cipher_part_is_rescaled() -> None:
    unit = estimate_helpers.unit("page_read", 10.0, estimate_helpers.PAGE)
    # Here 16384 B at 8192 MB/s = 2 µs a page; there twice as slow: 4 µs.
    hosts = rescale.Hosts(here=speeds(8192.0, 1000.0), there=speeds(4096.0, 500.0), same_host=False)
    r = rescale.resolve(unit, hosts, None)
    assert r.rescaled and r.us == pytest.approx(12.0)
    assert (r.low_us, r.high_us) == pytest.approx((10.0, 14.0))
    assert "cipher part 2.00 µs × 2.00" in r.how and "the server's host" in r.how
    sign = rescale.resolve(estimate_helpers.unit("handshake", 2000.0, estimate_helpers.SIGN),
                           hosts, None)  # fmt: skip
    # 1,000 signs/s here (1,000 µs each), 500 there: +1,000 µs.
    assert sign.us == pytest.approx(3000.0)


def test_a_cipher_only_unit_scales_whole_and_a_cipher_part_never_exceeds_its_unit() -> None:
    log = estimate_helpers.unit(
        "log_mib", 170.0, estimate_helpers.PAGE.model_copy(update={"count": 64}),
        kind="cipher only",
    )  # fmt: skip
    hosts = rescale.Hosts(here=speeds(8192.0, 1000.0), there=speeds(4096.0, 500.0), same_host=False)
    assert rescale.resolve(log, hosts, None).us == pytest.approx(340.0)
    # A busy moment here makes openssl slower than the whole unit measured earlier.
    slow_here = rescale.Hosts(here=speeds(100.0, 1.0), there=speeds(200.0, 2.0), same_host=False)
    small = estimate_helpers.unit("page_read", 10.0, estimate_helpers.PAGE)
    assert rescale.resolve(small, slow_here, None).us == pytest.approx(5.0)
    # Where the unit's own run measured its cipher (the report's floor), that is the part.
    floored = small.model_copy(update={"cipher_us": 3.0})
    assert rescale.resolve(floored, hosts, None).us == pytest.approx(13.0)


def test_the_same_host_and_cipher_is_not_rescaled_and_says_why() -> None:
    unit = estimate_helpers.unit("page_read", 10.0, estimate_helpers.PAGE)
    same = rescale.Hosts(here=speeds(8192.0, 1.0), there=None, same_host=True)
    r = rescale.resolve(unit, same, "aes-256-ctr")
    assert not r.rescaled and r.us == 10.0 and r.how == "the server runs on this machine"
    away = rescale.Hosts(here=speeds(8192.0, 1.0), there=None, same_host=False, why_not="no ssh")
    r = rescale.resolve(unit, away, None)
    assert not r.rescaled and r.how == "not rescaled to the server's host: no ssh"


def test_a_server_with_another_cipher_is_rescaled_on_this_machine() -> None:
    def here(argv: list[str]) -> str:
        mb = 8192.0 if argv[-1] == "aes-256-ctr" else 1024.0  # CBC encrypt 8× slower
        return f"+H:16384\n+F:22:{argv[-1]}:{mb * 1e6}\n"

    write = estimate_helpers.unit(
        "page_written", 20.0, estimate_helpers.PAGE.model_copy(update={"direction": "encrypt"})
    )
    away = rescale.Hosts(here=here, there=None, same_host=False, why_not="no ssh")
    r = rescale.resolve(write, away, "aes-256-cbc")
    assert r.rescaled and r.us == pytest.approx(20.0 - 2.0 + 16.0)
    assert "aes-256-ctr → aes-256-cbc" in r.how and "not rescaled to the server's host" in r.how
    # The handshake is not the table cipher's: it stays.
    sign = estimate_helpers.unit("handshake", 2000.0, estimate_helpers.SIGN)
    assert not rescale.resolve(sign, away, "aes-256-cbc").rescaled


def test_an_openssl_that_fails_there_leaves_the_unit_as_measured_with_why() -> None:
    def broken(argv: list[str]) -> str:
        raise BadInput("ssh users-host: 'openssl speed' failed: command not found")

    hosts = rescale.Hosts(here=speeds(8192.0, 1.0), there=broken, same_host=False)
    r = rescale.resolve(
        estimate_helpers.unit("page_read", 10.0, estimate_helpers.PAGE), hosts, None
    )
    assert not r.rescaled and r.us == 10.0 and "command not found" in r.how


# -- the report ----------------------------------------------------------------------------


def window_of(intervals: list[Rates]) -> counters.Window:
    return counters.Window(
        started_at="2026-02-03T10:00:00+00:00", seconds=sum(r.seconds for r in intervals),
        variables={"version": "10.11.19-MariaDB", "innodb_encrypt_tables": "OFF",
                   "have_ssl": "YES", "log_bin": "OFF"},
        changed={}, intervals=intervals, missing=[], server_cpu="a fake", host_cores=8,
    )  # fmt: skip


def test_the_report_answers_in_words_and_a_table_per_cause_with_totals() -> None:
    window = window_of(
        [rates(2000.0, connections=10.0, tls_handshakes=5.0, bytes=float(1 << 20))] * 3
    )
    used = {k: validate.as_measured(u) for k, u in estimate_helpers.typical().items()}
    e = model.estimate(window.intervals, used, "tables")
    built = estimate_report.build("db:3306", window, e, used)
    text = estimate_report.render_markdown(built)
    # 2,000 pages/s × 10 µs = 0.02; 10 conn/s × 2,000 µs = 0.02; 1 MiB/s × 400 µs = 0.0004.
    assert "about **0.0404 cores** (0.0323–0.0485)" in text
    assert "**2.0%** (1.6%–2.4%) of the 2.00 cores it used over the window on a host of 8" in text
    assert "Most of it is table reads (50%) and TLS handshakes (50%)." in text
    assert "| table reads | `Innodb_pages_read` | 2,000 (2,000–2,000) pages/s |" in text
    assert "| *redo log (not in scope tables)* |" in text
    assert "| **total** | | | | **0.0404 (0.0323–0.0485)** | **2.0% (1.6%–2.4%)** | |" in text
    assert built.on_now["tls_handshakes"] == "50% of new connections"
    assert built.on_now["table_reads"] == "no" and built.on_now["binary_log"] == "no binary log"
    assert "## What this leaves out" in text and "Latency under saturation" in text
    again = estimate_report.EstimateReport.model_validate(json.loads(built.model_dump_json()))
    assert again == built


# -- the check of the model ----------------------------------------------------------------


def test_the_check_holds_a_model_that_is_true_within_its_limit(tmp_path: Path) -> None:
    checked = validate.validate(estimate_runs.directory(tmp_path / "r"))
    reads = [c for c in checked.cells if c.kind == validate.IO_BOUND_READ]
    assert len(reads) == 3
    assert all(c.error_pct is not None and abs(c.error_pct) < 5 for c in reads)
    assert validate.outside(checked) == []
    writes = [c for c in checked.cells if c.kind == "write"]
    assert writes and all(c.error_pct is not None and abs(c.error_pct) < 5 for c in writes)
    # One bulk cell: no other cell to take its unit from, so no estimate (never its own).
    bulk = next(c for c in checked.cells if c.kind == "bulk")
    assert bulk.estimated_cores is None and "no other cell" in bulk.note
    text = estimate_report.render_validation(checked)
    assert "| oltp_read_only io-bound 4 thr | io-bound read | 12 |" in text


def test_the_check_fails_a_model_whose_cost_per_page_is_not_one_cost(tmp_path: Path) -> None:
    # Per page 30 µs at 1 thread, 10 at 4 and 16: held out, the 1-thread cell is estimated
    # at 10 µs a page, a third of what it measured.
    truth = estimate_runs.Truth(read_us_by_threads={1: 30.0, 4: 10.0, 16: 10.0})
    checked = validate.validate(estimate_runs.directory(tmp_path / "r", truth))
    failing = validate.outside(checked)
    assert any("io-bound 1 thr" in line for line in failing), failing


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "nothing to do"),
        (["--seconds", "5", "--target", "mysql://u@db/"], "--seconds 5"),
        (["--units-profile", "x", "--target", "mysql://u@db/"], "goes with --measure-units"),
        (["--validate", "d", "--target", "mysql://u@db/"], "--validate DIR"),
        (["--target", "mysql://u:secret@db/"], "the DSN holds a password"),
        (["--defaults-extra-file", "f"], "goes with --target"),
        (["--units-from", "x", "--measure-units"], "not both"),
        (["--units-from", "/nonexistent-dir"], "/nonexistent-dir"),
        (["--units-from", "d", "--json", "f.json"], "--json writes an estimate or a validation"),
    ],
)
def test_bad_input_is_one_line_with_the_fix(args: list[str], words: str, state_dir: Path) -> None:
    result = encbench_here("estimate", *args)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    assert "Traceback" not in result.stderr


def test_an_estimate_with_no_units_stored_says_how_to_get_them(state_dir: Path) -> None:
    result = encbench_here("estimate", "--target", "mysql://u@127.0.0.1:9/")
    assert result.returncode == 2
    assert "no unit costs are stored on this machine" in result.stderr
    assert "--measure-units" in result.stderr


def test_units_from_a_directory_are_stored_and_listed(tmp_path: Path, state_dir: Path) -> None:
    directory = estimate_runs.directory(tmp_path / "r")
    result = encbench_here("estimate", "--units-from", str(directory))
    assert result.returncode == 0, result.stderr
    assert "# Unit costs of encryption on this machine" in result.stdout
    assert "extra server CPU per page read from disk (decrypted)" in result.stdout
    stored = json.loads((state_dir / "encbench" / units.MACHINE_FILE).read_text())
    assert set(stored["units"]) == set(units.UNIT_NAMES) - {"fs_block_read", "fs_block_written"}
    checked = encbench_here(
        "estimate", "--validate", str(directory), "--json", str(tmp_path / "v.json")
    )
    assert checked.returncode == 0, checked.stderr
    assert "# The estimate against measured runs" in checked.stdout
    assert json.loads((tmp_path / "v.json").read_text())["cells"]


def test_a_unit_whose_rounds_average_below_the_ciphers_own_cost_is_that_floor(
    tmp_path: Path,
) -> None:
    """A point below its own interval was reported once (2.11 µs in 2.64–18.4): a mean under
    the cipher's floor is noise, and the unit is then the floor, inside its interval."""
    truth = estimate_runs.Truth(read_us_by_threads={1: 1.0, 4: 1.0, 16: 1.0})
    unit = units.from_directory(estimate_runs.directory(tmp_path / "r", truth)).units["page_read"]
    assert unit.cipher_us is not None and unit.cipher_us > 1.0
    assert unit.us == pytest.approx(unit.cipher_us)
    assert unit.ci_us[0] <= unit.us <= unit.ci_us[1]
