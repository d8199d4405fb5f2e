"""`encbench estimate --prometheus URL --out DIR`: estimate.csv (one row per instance, plain
numbers, units in the header), estimate.html (self-contained, its plots inline, the fleet's
time series from one range query summed in Prometheus, top-N bars with the rest added),
at 3 and at 1,000 instances against the stub Prometheus of test_estimate_prometheus.py."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path

import pytest

from encbench.estimate import (
    fleet,
    fleet_csv,
    fleet_html,
    fleet_out,
    fleet_plots,
    fleet_series,
    kinds,
    model,
    prometheus,
    rescale,
    units,
)
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus, Sample
from tests import estimate_helpers
from tests.estimate import test_estimate_prometheus as base
from tests.estimate.test_estimate_prometheus import (
    WEEK,
    Answer,
    answers_for,
    fleet_answers,
    resolved,
    vector,
)
from tests.helpers import REPO, encbench_here
from tests.test_cli_bad_input import assert_one_line_error

# The stub Prometheus of the fleet's own tests, as a fixture of this module too.
prometheus_stub = base.stub

Stub = tuple[str, list[tuple[str, dict[str, str]]], list[Answer]]
DAY = Asked(end=1_800_000_000.0, since_s=86400, step_s=300)


def fleet_of(count: int) -> dict[str, dict[str, float]]:
    """`count` busy instances, each busier than the next by its rank, db0001 the busiest;
    db0002 restarted and with a gap; the last one quiet."""
    found = {}
    for k in range(count):
        name = f"db{k + 1:04d}:9104"
        values = fleet_answers(name, windows=WEEK.steps, restarts=0)
        scale = (count - k) / count
        found[name] = {
            key: v * scale if key.split(":")[0] in prometheus.STATISTICS else v
            for key, v in values.items()
        }
    if count > 1:
        found["db0002:9104"] |= {"windows": WEEK.steps / 2, "restarts": 1.0}
        last = f"db{count:04d}:9104"
        found[last] = {f"mean:{f}": 0.0 for f in kinds.first().SERIES} | {"windows": WEEK.steps}
    return found


def matrix(points: dict[str, list[tuple[float, float]]]) -> dict[str, object]:
    return {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {"metric": {"bound": b}, "values": [[t, str(v)] for t, v in p]}
                for b, p in points.items()
            ],
        },
    }


def test_the_series_query_sums_the_fleet_in_prometheus() -> None:
    promql = fleet_series.query(WEEK, resolved(), "tables")
    assert promql is not None
    assert promql.count("label_replace(") == 3 and promql.count(" or label_replace(") == 2
    # Summed there, over instances, each cause's rate over a step window × its unit.
    assert "sum(max by (instance) (rate(mysql_global_status_innodb_pages_read" in promql
    assert '{job="mysql"}[300s]' in promql
    assert "innodb_os_log_written" not in promql  # the redo log: scope all only
    assert "innodb_os_log_written" in (fleet_series.query(WEEK, resolved(), "all") or "")
    # Past MAX_POINTS steps, whole multiples of --step, each rate over its own window.
    year = Asked(end=WEEK.end, since_s=365 * 86400, step_s=300)
    step = fleet_series.resolution_s(year)
    assert step % 300 == 0 and year.since_s / step <= fleet_series.MAX_POINTS
    assert f"[{step:.0f}s]" in (fleet_series.query(year, resolved(), "tables") or "")
    assert fleet_series.query(WEEK, {}, "tables") is None


def test_the_series_adds_postgresql_instances_with_their_own_units() -> None:
    hosts = rescale.Hosts(
        here=rescale.local_speed, there=None, same_host=False, why_not=fleet.NOT_RESCALED
    )
    units = resolved() | {
        n: rescale.resolve(u, hosts, None) for n, u in estimate_helpers.typical_pg().items()
    }
    mixed = fleet_series.query(
        WEEK, units, "tables", fleet_series.Kinds(others=frozenset({"postgresql"}))
    )
    alone = fleet_series.query(
        WEEK, units, "tables", fleet_series.Kinds(False, frozenset({"postgresql"}))
    )
    assert mixed is not None and alone is not None
    # Each database's blocks added per instance, then over the fleet, × PostgreSQL's unit.
    read = "sum(sum by (instance) (rate(pg_stat_database_blks_read"
    assert read in mixed and read in alone and "mysql_global_status" in mixed
    # Beside MariaDB's, a step without PostgreSQL's exporters is 0, not a gap; alone, a gap.
    assert "or vector(0))" in mixed.split(read, 1)[1].split(" * ", 1)[0]
    assert "mysql_global_status" not in alone and "vector(0)" not in alone.split(" * ", 1)[0]
    # Their units, not MariaDB's: 5 µs a block read in typical_pg.
    assert "* 5e-06" in alone and fleet_series.query(WEEK, units, "tables") == (
        fleet_series.query(WEEK, resolved(), "tables")
    )


def test_the_series_sums_each_class_of_hosts_at_its_own_units() -> None:
    """--units-from LABEL=VALUE:FILE: each class's instances at its units, the rest at this
    machine's, each group labelled apart and summed (a group without samples drops out)."""
    doubled = {
        n: u.model_copy(update={"us": u.us * 2, "low_us": u.low_us * 2, "high_us": u.high_us * 2})
        for n, u in resolved().items()
    }
    c5 = fleet_series.ClassSeries("host_class", "c5", doubled)
    m6 = fleet_series.ClassSeries("host_class", "m6", resolved())
    promql = fleet_series.query(WEEK, resolved(), "tables", classes=[c5, m6])
    assert promql is not None
    assert '{job="mysql",host_class!~"c5|m6"}' in promql
    assert '{job="mysql",host_class="c5"}' in promql and 'host_class="m6"}' in promql
    assert promql.count('"group", "') == 3 * 3 and promql.startswith("label_replace(sum(")
    # The c5 group's rate × twice the unit of the rest's.
    read = fleet_series.query(WEEK, resolved(), "tables")
    assert read is not None
    per = float(read.split("innodb_pages_read", 1)[1].split(" * ", 1)[1].split(" ", 1)[0])
    c5_term = promql.split('host_class="c5"', 1)[1].split(" * ", 1)[1].split(" ", 1)[0]
    assert float(c5_term) == pytest.approx(2 * per, rel=1e-6)


def test_the_series_is_asked_once_and_read_back(prometheus_stub: Stub) -> None:
    url, asked, answer = prometheus_stub
    t0 = DAY.end - DAY.since_s
    answer[0] = lambda q, h: (
        200,
        matrix({b: [(t0 + 300, v), (t0 + 900, v * 2)] for b, v in (("estimate", 1.0),
                ("low", 0.5), ("high", 2.0))}),
    )  # fmt: skip
    found = fleet_series.ask(Prometheus(url), DAY, resolved(), "tables")
    assert len(asked) == 1
    assert found is not None and found.times == [t0 + 300, t0 + 900]
    assert (found.cores, found.low, found.high) == ([1.0, 2.0], [0.5, 1.0], [2.0, 4.0])
    svg = fleet_plots.series_svg(found, fleet.FleetTotal(instances=2, mean=None, peak=None))
    assert svg is not None and svg.startswith("<svg")


def test_the_csv_is_one_row_per_instance_of_plain_numbers() -> None:
    answers = answers_for(fleet_of(3))
    answers["host_busy"] = [Sample({"instance": "db0001:9100"}, 2.0)]
    answers["host_cores"] = [Sample({"instance": "db0001:9100"}, 8.0)]
    built = fleet.build("http://p:9090", WEEK, "", answers, resolved(), "tables")
    rows = list(csv.DictReader(io.StringIO(fleet_csv.render(built))))
    assert [r["instance"] for r in rows] == ["db0001:9104", "db0002:9104", "db0003:9104"]
    first = rows[0]
    assert first["rank"] == "1" and first["scope"] == "tables"
    mean = built.instances[0].mean.total.cores
    assert mean is not None
    assert float(first["extra_cores_mean"]) == mean.value
    assert (
        float(first["extra_cores_mean_low"]) <= mean.value <= float(first["extra_cores_mean_high"])
    )
    assert float(first["table_reads_rate_pages_per_s"]) == 500.0
    assert float(first["tls_bytes_rate_mib_per_s"]) == 10.0
    assert (first["host_cpus"], first["host_busy_cores"]) == ("8", "2.0")
    assert float(first["host_share_pct"]) == pytest.approx(100 * mean.value / 2.0)
    assert rows[1]["host_cpus"] == rows[1]["host_share_pct"] == ""
    # Every numeric column holds a plain number or nothing: no unit, no separator.
    for r in rows:
        for column, cell in r.items():
            if column.endswith(("_cores", "_low", "_high", "_pct", "_per_s", "_peak")) and cell:
                float(cell)
                assert not re.search(r"[^0-9.e+-]", cell), (column, cell)
    assert "restarted 1 time(s)" in rows[1]["notes"]
    assert rows[2]["notes"].startswith("no traffic")
    assert set(rows[0]) == set(fleet_csv.header())


def test_the_csv_lists_an_instance_without_counters_last() -> None:
    answers = answers_for(fleet_of(1))
    answers["unreachable"].append(Sample({"instance": "db9:9104"}, 1.0))
    built = fleet.build("http://p:9090", WEEK, "", answers, resolved(), "tables")
    rows = list(csv.DictReader(io.StringIO(fleet_csv.render(built))))
    assert rows[-1]["instance"] == "db9:9104" and rows[-1]["rank"] == ""
    assert rows[-1]["notes"] == fleet_csv.not_estimated()
    assert rows[-1]["extra_cores_mean"] == ""


@pytest.mark.parametrize("count", [3, 1000])
def test_the_page_stays_readable_and_small(count: int) -> None:
    built = fleet.build(
        "http://p:9090", WEEK, "", answers_for(fleet_of(count)), resolved(), "tables"
    )
    times = [WEEK.end - WEEK.since_s + 300 * (k + 1) for k in range(WEEK.steps)]
    times = times[:100] + times[200:]  # a gap: no exporter reported
    cores = [1.0 + (k % 288) / 288 for k in range(len(times))]
    series = fleet_series.FleetSeries(
        step_s=300,
        times=times,
        cores=cores,
        low=[c / 2 for c in cores],
        high=[c * 2 for c in cores],
    )
    started = time.monotonic()
    page = fleet_html.render(built, series)
    took = time.monotonic() - started
    assert took < 20, took
    assert len(page) < 2_000_000, len(page)
    assert page.count("<svg") == 3
    assert "http://" not in page.replace("http://p:9090", "").replace(
        "http://www.w3.org/", ""
    )  # nothing fetched: the SVG namespace only
    assert "<script" not in page and "src=" not in page
    bars = fleet_plots.TOP_BARS
    shown = min(count, bars)
    for k in range(shown):
        assert f"db{k + 1:04d}:9104" in page
    if count > bars:
        assert f"the other {count - bars}, added" in page
        assert f"db{bars + 1:04d}:9104</text>" not in page  # below the top: only in the total
        assert f"(the other {count - fleet_html.TABLE_ROWS}: estimate.csv)" in page
    assert "Restarts in the window (1)" in page
    assert "No traffic: counters did not move (1)" in page
    assert "Gaps: series missing from part of the window (1)" in page


def test_the_cli_writes_four_files_and_asks_one_range_query(
    prometheus_stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, asked, answer = prometheus_stub
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    units.write_machine(estimate_helpers.typical())
    by_instance = fleet_of(1000)
    names = {q: n for n, q in prometheus.queries(Asked(0, 7 * 86400, 300)).items()}

    def reply(query: str, headers: dict[str, str]) -> tuple[int, object]:
        if '"bound"' in query:
            now = time.time()
            return 200, matrix({b: [(now - 600, 2.0), (now - 300, 3.0)] for b in
                                ("estimate", "low", "high")})  # fmt: skip
        name = names.get(query, "")
        found = [({"instance": i}, v[name]) for i, v in by_instance.items() if name in v]
        return 200, vector(found)

    answer[0] = reply
    out = tmp_path / "fleet"
    started = time.monotonic()
    result = encbench_here(
        "estimate", "--prometheus", url, "--out", str(out), env={"XDG_STATE_HOME": str(state)}
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(out / n) for n in fleet_out.NAMES]
    assert sum('"bound"' in q for q, _ in asked) == 1
    data = json.loads((out / "estimate.json").read_text())
    assert len(data["instances"]) == 1000
    rows = list(csv.DictReader(io.StringIO((out / "estimate.csv").read_text())))
    assert len(rows) == 1000 and rows[0]["instance"] == "db0001:9104"
    page = (out / "estimate.html").read_text()
    assert page.count("<svg") == 3
    assert (out / "estimate.md").read_text().startswith("# What encryption would cost this fleet")
    sizes = {p.name: p.stat().st_size for p in out.iterdir()}
    assert sizes["estimate.html"] < 2_000_000, sizes
    assert took < 60, took
    # Asked again into the same directory: refused before any query.
    before = len(asked)
    again = encbench_here(
        "estimate", "--prometheus", url, "--out", str(out), env={"XDG_STATE_HOME": str(state)}
    )
    assert_one_line_error(again, "estimate.md exists", "choose another --out")
    assert len(asked) == before


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--rules", "--out", "x"), ("--out goes with --prometheus",)),
        (("--target", "mysql://u@h:1/", "--out", "x"), ("--out goes with --prometheus",)),
    ],
)
def test_out_without_prometheus_is_one_line(
    args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    assert_one_line_error(encbench_here("estimate", *args), *fragments)


def test_out_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("")
    result = encbench_here("estimate", "--prometheus", "http://127.0.0.1:1", "--out", str(taken))
    assert_one_line_error(result, "is a file, not a directory")


def test_every_cause_has_its_columns() -> None:
    columns = fleet_csv.header()
    for c in model.CAUSES:
        assert f"{c.key}_extra_cores" in columns and f"{c.key}_extra_cores_peak" in columns
    assert len(columns) == len(set(columns))


def test_the_docs_give_the_pages_own_limits() -> None:
    text = (REPO / "docs" / "estimate.md").read_text()
    words = " ".join(text.split())
    assert f"past {fleet_series.MAX_POINTS:,} steps" in words
    assert f"the {fleet_plots.TOP_BARS} instances that would pay most" in words
    assert f"the first {fleet_html.TABLE_ROWS};" in words
    for column in ("extra_cores_mean", "host_share_pct", "tables_encrypted_now", "notes"):
        assert column in fleet_csv.header() and f"`{column}`" in words


def test_a_refused_range_query_costs_the_page_its_series_only(prometheus_stub: Stub) -> None:
    url, _, answer = prometheus_stub
    answer[0] = lambda q, h: (422, {"status": "error", "error": "query_range is not allowed"})
    built = fleet.build("http://p:9090", DAY, "", answers_for(fleet_of(3)), resolved(), "tables")
    said: list[str] = []
    why = fleet_out.over_time(Prometheus(url), DAY, resolved(), built, said.append)
    assert isinstance(why, str) and "query_range is not allowed" in why
    assert said and "not drawn" in said[0]
    page = fleet_html.render(built, why)
    assert "No time series of the fleet: Prometheus did not answer" in page
    assert page.count("<svg") == 2


def test_a_cause_counted_in_pages_and_in_blocks_has_a_rate_column_for_each() -> None:
    """MariaDB's 16 KiB pages and PostgreSQL's 8 KiB blocks are never added in one column."""
    report = fleet.build("http://p:9090", DAY, "", answers_for(fleet_of(3)), resolved(), "tables")
    pg = report.instances[0]
    causes = [
        c.model_copy(update={"rate_unit": "blocks/s"}) if c.key == "table_reads" else c
        for c in pg.mean.causes
    ]
    pg = pg.model_copy(update={"mean": pg.mean.model_copy(update={"causes": causes})})
    mixed = report.model_copy(update={"instances": [pg, *report.instances[1:]]})
    rows = list(csv.DictReader(io.StringIO(fleet_csv.render(mixed))))
    assert "table_reads_rate_blocks_per_s" in rows[0] and "table_reads_rate_pages_per_s" in rows[0]
    assert rows[0]["table_reads_rate_blocks_per_s"] and not rows[0]["table_reads_rate_pages_per_s"]
    assert rows[1]["table_reads_rate_pages_per_s"] and not rows[1]["table_reads_rate_blocks_per_s"]
