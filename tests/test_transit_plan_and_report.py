"""The in-transit study's cells, its per-run proof and its report, on made-up records."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from encbench import profile as profiles
from encbench import rendering
from encbench.errors import ProofError
from encbench.report import documents, markdown
from encbench.results.store import ResultStore
from encbench.studies.at_rest.cells import cells as at_rest_cells
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.in_transit import cells as transit_plan
from encbench.studies.in_transit import needs as transit_needs
from encbench.studies.in_transit import summary as in_transit
from encbench.studies.in_transit.checks import check_run
from encbench.studies.in_transit.models import InTransitSummary
from encbench.studies.in_transit.records import TransitCell, TransitRecord


def load(body: str) -> profiles.Profile:
    return profiles.parse(f'name = "t"\nstudies = ["in-transit"]\n[transit]\n{body}', "test")


SEED = load(
    'tests = ["connect", "oltp_point_select", "bulk"]\n'
    'key_types = ["rsa1024", "rsa4096"]\nmethods = ["tls", "ssh"]\n'
    'ssh_ciphers = ["aes256-cbc"]\nconnect_threads = [1]\nquery_threads = [1, 8]\n'
    "rtt_ms = [0, 40]\nmin_rounds = 2\n"
)


def test_cells_are_grouped_by_server_tls_so_each_configuration_starts_once() -> None:
    cells = transit_plan.cells(SEED)
    configs = [transit_plan.server_tls(c, SEED.transit) for c in cells]
    assert [k for k, _ in itertools.groupby(configs)] == [("rsa1024", ""), ("rsa4096", "")]
    # per query and bulk: the first key only; distances: the connection test only
    assert {c.key_type for c in cells if c.test != "connect" and c.method == "tls"} == {"rsa1024"}
    assert {c.threads for c in cells if c.test == "oltp_point_select"} == {1, 8}
    assert all(c.rtt_ms == 0 for c in cells if c.test != "connect")
    assert {(c.key_type, c.rtt_ms) for c in cells if c.method == "tls" and c.test == "connect"} == {
        ("rsa1024", 0),
        ("rsa1024", 40),
        ("rsa4096", 0),
        ("rsa4096", 40),
    }
    ssh = [c for c in cells if c.method == "ssh"]
    assert {c.test for c in ssh} == {"connect", "bulk"} and {c.cipher for c in ssh} == {
        "aes256-cbc"
    }


def test_an_at_rest_profile_has_no_transit_cells_and_the_reverse() -> None:
    assert at_rest_cells(SEED) == []
    at_rest = profiles.parse('name = "a"\n', "test")
    assert transit_plan.cells(at_rest) == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ('key_types = ["rsa512"]', "unknown TLS key type 'rsa512'"),
        ('tls_version = "TLSv1.1"', "transit.tls_version"),
        ("rtt_ms = [0, 20000]", "out of range"),
        ('ssh_ciphers = ["rot13"]', "unknown SSH cipher 'rot13'"),
        ('bulk_ciphers = ["AES128-SHA"]', 'needs transit.tls_version = "TLSv1.2"'),
    ],
)
def test_bad_transit_settings_are_refused_naming_the_key(body: str, fragment: str) -> None:
    with pytest.raises(profiles.BadInput) as caught:
        load(body + "\n")
    assert fragment in str(caught.value)


def record(cell: TransitCell, n: int, variant: str, rate: float, **kw: int) -> TransitRecord:
    values = {
        "cell": cell,
        "round": n,
        "variant": variant,
        "position": 0,
        "session": "s",
        "started_at": "t",
        "wall_s": 1.0,
        "rate": rate,
        "events": max(1, int(rate)),
        "bytes": 0,
        "errors": 0,
        "latency_avg_ms": 1000 / rate,
        "latency_p95_ms": 1000 / rate,
        "server_cpu_s": 0.5,
        "tunnel_cpu_s": 0.0,
        "client_cpu_s": 0.1,
        "harness_cpu_s": 0.0,
        "other_cpu_s": 0.0,
        "steal_s": 0.0,
        "tls_handshakes": max(1, int(rate)) if variant == "encrypted" else 0,
        "tunnel_handshakes": 0,
        "tunnel_resumed": 0,
        "session_cache_hits": 0,
        "raw_output": "raw/x",
    }
    values.update(kw)
    return TransitRecord(**values)  # type: ignore[arg-type]


def fake_runs() -> list[TransitRecord]:
    runs = []
    for cell in transit_plan.cells(SEED):
        near = cell.rtt_ms == 0
        for n in range(3):
            plain = (3000.0 if near else 6.0) * (1 + 0.01 * n)
            lost = {"rsa1024": 0.9, "rsa4096": 0.97}.get(cell.key_type, 0.5) if near else 0.3
            runs.append(record(cell, n, "plain", plain))
            runs.append(record(cell, n, "encrypted", plain * (1 - lost) * (1 + 0.002 * n)))
    return runs


def transit_report(part: InTransitSummary, html: bool = False) -> str:
    """report.md (or report.html) of an in-transit-only summary."""
    from encbench.report import html as html_report

    doc = rendering.document(documents.summarize("t", None, {"in-transit": part}))
    return html_report.render(doc) if html else markdown.render(doc)


def test_the_report_has_the_seed_tables_with_ci_and_the_loss_per_distance() -> None:
    data = in_transit.build(fake_runs(), SEED, {"proofs": {}, "skipped": {}, "pki": {}})
    text = transit_report(data)
    assert "| MariaDB TLS rsa1024 | 1 | 3,030.0 (" in text
    assert "### Connection rate lost to TLS, by network distance" in text
    assert "| key | RTT 0 ms, 1 thr | RTT 40 ms, 1 thr |" in text
    row = next(line for line in text.splitlines() if line.startswith("| rsa4096 |"))
    assert "97.0%" in row and "29.9%" in row
    assert "Ssl_session_cache_hits grew by 0" in text
    whole = text
    assert whole.startswith("# encbench: in-transit encryption")


def test_transit_records_round_trip_and_a_cut_line_is_measured_again(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "out", "t", 'name = "t"\n')
    first = fake_runs()[0]
    store.append(first)
    with open(store.path / "in-transit.jsonl", "a") as f:
        f.write('{"cell": {"test": "conn')  # a crash in the middle of a line
    assert store.runs(TransitRecord) == [first]
    assert store.runs(RunRecord) == []
    assert first.rate_unit == "conn/s"


@pytest.mark.parametrize(
    ("ssl", "events", "handshakes", "fragment"),
    [
        (False, 100, 1, "expected 0"),
        (True, 100, 99, "99 TLS handshakes for 100"),
    ],
)
def test_a_run_whose_counters_contradict_its_path_is_refused(
    ssl: bool, events: int, handshakes: int, fragment: str
) -> None:
    cell = TransitCell("connect", "tls", "rsa2048", "", 0, 1)
    run = record(cell, 0, "encrypted" if ssl else "plain", 100, events=events)
    with pytest.raises(ProofError, match=fragment):
        check_run(replace(run, tls_handshakes=handshakes))


def test_a_tunnel_run_without_its_own_handshakes_is_refused() -> None:

    cell = TransitCell("connect", "stunnel", "rsa2048", "", 0, 1)
    run = record(cell, 0, "encrypted", 11, events=11, tls_handshakes=0)
    with pytest.raises(ProofError, match="the tunnel carried 10 sessions, expected 11"):
        check_run(replace(run, tunnel_handshakes=10))
    check_run(replace(run, tunnel_handshakes=11))  # one per connection: fine


def test_per_query_runs_need_one_handshake_per_client_thread() -> None:
    cell = TransitCell("oltp_point_select", "tls", "rsa2048", "", 0, 4)
    run = record(cell, 0, "encrypted", 50_000, events=50_000, tls_handshakes=3)
    with pytest.raises(ProofError, match="3 TLS handshakes for 4"):
        check_run(run)


@pytest.mark.parametrize(
    ("key", "cipher", "ok"),
    [
        ("ecdsa-p256", "ECDHE-ECDSA-AES128-GCM-SHA256", True),
        ("ecdsa-p256", "ECDHE-RSA-AES128-GCM-SHA256", False),
        ("ed25519", "ECDHE-ECDSA-AES128-GCM-SHA256", True),
        ("rsa2048", "ECDHE-RSA-CHACHA20-POLY1305", True),
    ],
)
def test_a_bulk_cipher_must_suit_the_key_type(key: str, cipher: str, ok: bool) -> None:
    from encbench import proc

    if proc.which("openssl") is None:
        pytest.skip("openssl not installed")
    prof = load(f'key_types = ["{key}"]\ntls_version = "TLSv1.2"\nbulk_ciphers = ["{cipher}"]\n')
    if ok:
        transit_needs.check_ciphers(prof)
    else:
        with pytest.raises(profiles.BadInput, match="choose a suite with Au=ECDSA"):
            transit_needs.check_ciphers(prof)


def test_the_report_says_how_often_stunnel_resumed_when_allowed() -> None:
    prof = load(
        'methods = ["stunnel"]\nstunnel_resume = [false, true]\ntests = ["connect"]\n'
        "connect_threads = [1]\n"
    )
    runs = []
    for cell in transit_plan.cells(prof):
        for n in range(2):
            runs.append(record(cell, n, "plain", 3000.0))
            resumed = 45 if cell.resume else 0
            runs.append(
                record(cell, n, "encrypted", 50.0, tunnel_handshakes=50, tunnel_resumed=resumed)
            )
    text = transit_report(in_transit.build(runs, prof, {}))
    assert "| stunnel (rsa2048) resumed | 1 |" in text
    assert "(90 of 100 handshakes there were resumptions)" in text


def test_a_rate_limit_without_a_distance_is_refused() -> None:
    with pytest.raises(profiles.BadInput, match="add a distance or remove the rate"):
        load("rate_mbit = 100\n")


def test_the_html_report_has_the_transit_tables_and_a_plot_per_test() -> None:
    page = transit_report(in_transit.build(fake_runs(), SEED, {}), html=True)
    assert page.count("<svg") == 4  # connect, point select, bulk, and loss by distance
    assert "<h3>Connection rate lost to TLS, by network distance</h3>" in page
    ids = [m for m in page.split('id="')[1:]]
    assert len({i.split('"')[0] for i in ids}) == len(ids)  # no clashing ids between plots


def test_a_stunnel_run_that_resumed_where_resumption_is_refused_is_refused() -> None:

    cell = TransitCell("connect", "stunnel", "rsa2048", "", 0, 1, resume=False)
    run = record(cell, 0, "encrypted", 10, events=10, tls_handshakes=0, tunnel_handshakes=10)
    with pytest.raises(ProofError, match="stunnel resumed 3 sessions, expected none"):
        check_run(replace(run, tunnel_resumed=3))
    allowed = TransitCell("connect", "stunnel", "rsa2048", "", 0, 1, resume=True)
    check_run(replace(run, cell=allowed, tunnel_resumed=3))


def test_ignored_errors_are_named_in_the_report() -> None:
    prof = load('tests = ["connect"]\nconnect_threads = [1]\n')
    cell = transit_plan.cells(prof)[0]
    runs = [
        record(cell, n, v, 100.0, errors=2 if v == "encrypted" else 0)
        for n in range(2)
        for v in ("plain", "encrypted")
    ]
    text = transit_report(in_transit.build(runs, prof, {}))
    assert "ignored and went on after: connect tls rsa2048 1 thr encrypted 4." in text
