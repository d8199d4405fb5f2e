"""`encbench estimate --prometheus`: the queries (reduced in Prometheus, grouped by instance),
their answers turned into --target's model, the fleet's report, the credentials and the bad
input; against a stub of Prometheus's HTTP API on loopback that answers each query from a
table (tests/integration/test_estimate_prometheus.py holds it to a real Prometheus)."""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.estimate import fleet, kinds, model, prometheus, prometheus_api, rescale, units
from encbench.estimate.model import Figure
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus, Sample
from tests import estimate_helpers
from tests.helpers import encbench_here
from tests.test_cli_bad_input import assert_one_line_error

WEEK = Asked(end=1_800_000_000.0, since_s=7 * 86400, step_s=300, matchers='job="mysql"')
Answer = Callable[[str, dict[str, str]], tuple[int, object]]


@pytest.fixture
def stub() -> Iterator[tuple[str, list[tuple[str, dict[str, str]]], list[Answer]]]:
    """A Prometheus HTTP API on loopback: its URL, the queries it was asked (with their
    headers), and the function that answers them (set by the test)."""
    asked: list[tuple[str, dict[str, str]]] = []
    answer: list[Answer] = [lambda q, h: (200, vector([]))]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            query = urllib.parse.parse_qs(body)["query"][0]
            headers = dict(self.headers.items())
            asked.append((query, headers))
            status, data = answer[0](query, headers)
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked, answer
    finally:
        server.shutdown()
        server.server_close()


def vector(series: list[tuple[dict[str, str], float]]) -> dict[str, object]:
    return {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [{"metric": m, "value": [1.0, str(v)]} for m, v in series],
        },
    }


# Two servers and a host: db1 busy, db2 with no traffic; db1's host has node_exporter.
MEANS = {
    "pages_read": 500.0, "pages_written": 200.0, "redo_bytes": 2 * units.MIB,
    "binlog_bytes": units.MIB, "connections": 5.0, "tls_handshakes": 0.0,
    "bytes": 10 * units.MIB, "pages_decrypted": 0.0, "pages_encrypted": 0.0,
}  # fmt: skip


def fleet_answers(instance: str, *, windows: float, restarts: float) -> dict[str, float]:
    """What Prometheus answers for one busy instance, by the name of the query."""
    found = {f"mean:{f}": v for f, v in MEANS.items()}
    for field in prometheus.CAUSE_FIELD.values():
        found[f"low:{field}"] = 0.5 * MEANS[field]
        found[f"high:{field}"] = 2 * MEANS[field]
        found[f"peak:{field}"] = 1.5 * MEANS[field]
    found |= {"windows": windows, "restarts": restarts, "unreachable": 0.0}
    found |= {"variable:innodb_encrypt_tables": 1.0, "variable:have_ssl": 1.0}
    return found


def answers_for(by_instance: dict[str, dict[str, float]]) -> dict[str, list[Sample]]:
    found: dict[str, list[Sample]] = {}
    for instance, values in by_instance.items():
        for key, value in values.items():
            found.setdefault(key, []).append(Sample({"instance": instance}, value))
    found["version"] = [
        Sample({"instance": i, "version": "10.11.6-MariaDB", "version_comment": "x"}, 1.0)
        for i in by_instance
    ]
    found["host_busy"] = [Sample({"instance": "db1:9100"}, 2.0)]
    found["host_cores"] = [Sample({"instance": "db1:9100"}, 8.0)]
    return found


def resolved() -> dict[str, rescale.Resolved]:
    hosts = rescale.Hosts(
        here=rescale.local_speed,
        there=None,
        same_host=False,
        why_not=fleet.NOT_RESCALED,
    )
    return {n: rescale.resolve(u, hosts, None) for n, u in estimate_helpers.typical().items()}


def test_every_query_is_reduced_in_prometheus_by_instance() -> None:
    asked = prometheus.queries(WEEK)
    for name, query in asked.items():
        assert "by (instance" in query, (name, query)
        if name.startswith(("mean:", "low:", "high:", "peak:")):
            assert "[604800s:300s]" in query and "[300s])" in query, query
            assert 'job="mysql"' in query
    assert asked["peak:connections"].startswith("max by (instance) (quantile_over_time(0.95, ")
    assert asked["mean:bytes"].count("rate(") == 2  # sent + received, per step window
    assert "mysql_global_status_innodb_pages_read" in asked["mean:pages_read"]
    assert asked["restarts"].startswith("max by (instance) (resets(")


def test_no_subquery_groups_its_series_at_every_step() -> None:
    # Grouping inside a subquery runs at each of its 2,016 steps of a week: at 100
    # instances it made each query 3-4 times slower than grouping its one answer.
    subqueries = {n: q for n, q in prometheus.queries(WEEK).items() if ":300s])" in q}
    assert len(subqueries) == len(kinds.first().SERIES) + 3 * len(prometheus.CAUSE_FIELD) + 1
    # A subquery holds all its series' steps at once: over the hosts' CPUs × modes, a fleet's
    # would pass Prometheus's --query.max-samples, so their rate is over the whole window.
    assert not any("node_cpu" in q for q in subqueries.values())
    assert prometheus.queries(WEEK)["host_busy"].endswith('{mode!="idle"}[604800s]))')
    for name, query in subqueries.items():
        inside = query.split("_over_time(", 1)[1]
        assert " by (" not in inside, (name, query)
        assert query.startswith(("max by (instance) (", "sum by (instance) (")), (name, query)


def test_answers_become_the_models_rates_and_notes() -> None:
    values = fleet_answers("db1:9104", windows=WEEK.steps / 2, restarts=2)
    [instance] = prometheus.by_instance(answers_for({"db1:9104": values}))
    assert (instance.host_busy, instance.host_cores) == (2.0, 8)
    mean = prometheus.rates(instance, "mean")
    assert mean is not None and mean.pages_read == 500.0
    rates = prometheus.cause_rates(instance, "mean")
    assert rates["tls_bytes"] == Figure(value=10.0, low=5.0, high=20.0)  # MiB/s
    estimate = model.estimate_at(rates, WEEK.since_s, resolved(), "tables", instance.host_busy)
    causes = {c.key: c for c in estimate.causes}
    reads = causes["table_reads"].cores
    assert reads is not None
    assert (reads.value, reads.low, reads.high) == pytest.approx(
        (500 * 10e-6, 250 * 8e-6, 1000 * 12e-6)
    )
    notes = " ".join(prometheus.gaps(instance, WEEK))
    assert f"in {WEEK.steps // 2} of the window's {WEEK.steps} step windows" in notes
    assert "restarted 2 time(s)" in notes


def test_a_fleet_ranks_its_instances_and_says_gaps_restarts_and_no_traffic() -> None:
    quiet = {f"mean:{f}": 0.0 for f in MEANS} | {"windows": WEEK.steps, "restarts": 0.0}
    answers = answers_for(
        {
            "db2:9104": quiet,
            "db1:9104": fleet_answers("db1:9104", windows=WEEK.steps / 2, restarts=2),
        }
    )
    built = fleet.build("http://p:9090", WEEK, '{job="mysql"}', answers, resolved(), "tables")
    first, second = built.instances
    assert (first.instance, second.instance) == ("db1:9104", "db2:9104")
    # The model's own arithmetic: 500 pages/s × 10 µs, 5 connections/s × 2000 µs, …
    causes = {c.key: c for c in first.mean.causes}
    assert causes["table_reads"].cores is not None
    assert causes["table_reads"].cores.value == pytest.approx(500 * 10e-6)
    assert causes["table_reads"].cores.low == pytest.approx(250 * 8e-6)
    assert causes["tls_bytes"].cores is not None
    assert causes["tls_bytes"].cores.value == pytest.approx(10 * 400e-6)
    assert not causes["redo_log"].in_scope
    peak = {c.key: c for c in first.peak.causes}["table_reads"].cores
    assert peak is not None and peak.value == pytest.approx(750 * 10e-6)
    assert first.mean.total.share_pct is not None  # of the host's 2 busy cores
    assert first.mean.total.share_pct.value == pytest.approx(
        100 * first.mean.total.cores.value / 2.0  # type: ignore[union-attr]
    )
    assert first.host_cores == 8
    assert first.on_now["table_reads"].startswith("yes (innodb_encrypt_tables = ON)")
    notes = " ".join(first.notes)
    assert f"in {WEEK.steps // 2} of the window's {WEEK.steps} step windows" in notes
    assert "restarted 2 time(s)" in notes
    assert second.notes == ["no traffic in the window: its counters did not move, nothing to pay"]
    assert second.mean.total.cores is not None and second.mean.total.cores.value == 0
    assert built.fleet.instances == 2
    assert built.fleet.mean == first.mean.total.cores  # db2 adds nothing
    text = fleet.render_markdown(built)
    assert text.index("| 1 | db1:9104 |") < text.index("| 2 | db2:9104 |")
    assert "this machine's" in text and "95th percentile" in text
    assert "**fleet (2)**" in text


def test_an_exporter_that_never_reached_its_server_is_said() -> None:
    answers = answers_for({"db1:9104": fleet_answers("db1:9104", windows=2016, restarts=0)})
    answers["unreachable"] = [Sample({"instance": "db3:9104"}, 1.0)]
    built = fleet.build("http://p:9090", WEEK, "", answers, resolved(), "tables")
    assert [i.instance for i in built.instances] == ["db1:9104"]
    assert built.no_counters == ["db3:9104"]
    assert "no counters in the window" in " ".join(built.words)
    assert "db3:9104" in fleet.render_markdown(built)


def test_no_series_is_said() -> None:
    built = fleet.build("http://p:9090", WEEK, "", {}, resolved(), "tables")
    assert built.instances == []
    assert "no mysqld_exporter series" in " ".join(built.words)


def test_the_client_sends_credentials_from_the_environment_only(
    stub: tuple[str, list[tuple[str, dict[str, str]]], list[Answer]],
) -> None:
    url, asked, answer = stub
    answer[0] = lambda q, h: (200, vector([({"instance": "a"}, 1.5)]))
    auth = prometheus_api.authorization({prometheus_api.TOKEN: "t0k"}, None)
    [sample] = Prometheus(url, auth).query("up", 1.0)
    assert sample == Sample({"instance": "a"}, 1.5)
    assert asked[-1][1]["Authorization"] == "Bearer t0k"
    basic = prometheus_api.authorization(
        {prometheus_api.USER: "u", prometheus_api.PASSWORD: "p:w"}, None
    )
    assert basic == "Basic " + base64.b64encode(b"u:p:w").decode()


def test_credentials_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "creds"
    path.write_text("# ours\nENCBENCH_PROMETHEUS_TOKEN = abc\n")
    assert prometheus_api.authorization({}, path) == "Bearer abc"
    path.write_text("TOKEN=abc\n")
    with pytest.raises(BadInput, match="line 1: expected NAME=VALUE"):
        prometheus_api.authorization({}, path)
    with pytest.raises(BadInput, match="not both"):
        prometheus_api.authorization({prometheus_api.TOKEN: "a", prometheus_api.USER: "u"}, None)


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (401, {"status": "error"}, "refused the query (HTTP 401): set ENCBENCH_PROMETHEUS"),
        (400, {"status": "error", "error": "parse error"}, "parse error): check --match"),
        (
            422,
            {
                "status": "error",
                "errorType": "execution",
                "error": "query processing would "
                "load too many samples into memory in query execution",
            },
            "raise Prometheus's --query.max-samples",
        ),
        (
            503,
            {
                "status": "error",
                "errorType": "timeout",
                "error": "query timed out in query execution",
            },
            "raise Prometheus's --query.timeout",
        ),
    ],
)
def test_refusals_are_one_line(
    stub: tuple[str, list[tuple[str, dict[str, str]]], list[Answer]],
    status: int,
    body: object,
    message: str,
) -> None:
    url, _, answer = stub
    answer[0] = lambda q, h: (status, body)
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        Prometheus(url).query("up", 1.0)


def test_the_cli_reads_a_fleet_from_prometheus(
    stub: tuple[str, list[tuple[str, dict[str, str]]], list[Answer]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, asked, answer = stub
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    units.write_machine(estimate_helpers.typical())
    names = prometheus.queries(WEEK)
    by_query = {q.replace('job="mysql"', ""): n for n, q in names.items()}
    values = fleet_answers("db1:9104", windows=2016, restarts=0)

    def reply(query: str, headers: dict[str, str]) -> tuple[int, object]:
        name = by_query.get(query, "")
        value = values.get(name)
        return 200, vector([] if value is None else [({"instance": "db1:9104"}, value)])

    answer[0] = reply
    result = encbench_here(
        "estimate", "--prometheus", url, "--json", str(tmp_path / "fleet.json"),
        env={"XDG_STATE_HOME": str(state), prometheus_api.TOKEN: "secret-token"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "| 1 | db1:9104 |" in result.stdout
    data = json.loads((tmp_path / "fleet.json").read_text())
    assert data["since_s"] == 7 * 86400 and data["step_s"] == 300
    assert data["instances"][0]["mean"]["total"]["cores"]["value"] > 0
    assert all(h["Authorization"] == "Bearer secret-token" for _, h in asked)
    assert "secret-token" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--prometheus", "ftp://x"), ("give Prometheus's address as http://HOST:PORT",)),
        (("--prometheus", "http://a:b@x:9090"), ("credentials in the URL",)),
        (("--prometheus", "http://x", "--since", "7 days"), ("--since '7 days'",)),
        (("--prometheus", "http://x", "--step", "1h", "--since", "5m"), ("longer than",)),
        (("--prometheus", "http://x", "--step", "1s", "--since", "1y"), ("step windows",)),
        (("--prometheus", "http://x", "--match", "job=mysql"), ("in braces",)),
        (("--prometheus", "http://x", "--target", "mysql://u@h:1/"), ("one at a time",)),
        (
            (
                "--match",
                '{job="x"}',
            ),
            ("--match goes with --prometheus",),
        ),
    ],
)
def test_bad_input_is_one_line(args: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    assert_one_line_error(encbench_here("estimate", *args), *fragments)


def test_an_unreachable_prometheus_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    units.write_machine(estimate_helpers.typical())
    result = encbench_here("estimate", "--prometheus", "http://127.0.0.1:1")
    assert_one_line_error(result, "no answer", "/-/ready")
