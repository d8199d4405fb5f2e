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
from encbench.estimate import model, prometheus, prometheus_api, rescale, units
from encbench.estimate.model import Figure
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus, Sample
from tests import estimate_helpers

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
        why_not="the units are this machine's",
    )
    return {n: rescale.resolve(u, hosts, None) for n, u in estimate_helpers.typical().items()}


def test_every_query_is_reduced_in_prometheus_by_instance() -> None:
    asked = prometheus.queries(WEEK)
    for name, query in asked.items():
        assert "by (instance" in query, (name, query)
        if name.startswith(("mean:", "low:", "high:", "peak:")):
            assert "[604800s:300s]" in query and "[300s])" in query, query
            assert 'job="mysql"' in query
    assert asked["peak:connections"].startswith("quantile_over_time(0.95, ")
    assert asked["mean:bytes"].count("rate(") == 2  # sent + received, per step window
    assert "mysql_global_status_innodb_pages_read" in asked["mean:pages_read"]
    assert asked["restarts"].startswith("max by (instance) (resets(")


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
