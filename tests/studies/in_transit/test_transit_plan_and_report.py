"""The in-transit study's cells, its per-run proof and its report, on made-up records."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from pathlib import Path

import pytest

from encbench.commands import rendering
from encbench.errors import ProofError
from encbench.profiles import profile as profiles
from encbench.report import documents, markdown
from encbench.results.store import ResultStore
from encbench.servers.mariadb import tls
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
    # the tunnels follow the connection test to every distance
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
    assert {(c.test, c.rtt_ms) for c in ssh} == {("connect", 0), ("connect", 40), ("bulk", 0)}


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
        ('ciphers = ["DHE-RSA-AES256-SHA"]', 'needs transit.tls_version = "TLSv1.2"'),
        (
            'tls_version = "TLSv1.2"\nciphers = ["TLS_AES_128_GCM_SHA256"]',
            'needs transit.tls_version = "TLSv1.3", not "TLSv1.2"',
        ),
        ('ciphers = ["TLS_AES_128_CCM_SHA256"]', "not offered by MariaDB's clients"),
        ('ciphers = ["TLS_{section}"]', "'TLS_{section}' is not offered"),
        ('distance_tests = ["bulk"]', "distance_tests names bulk, which transit.tests"),
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
    assert "### Rate lost to encryption, by network distance" in text
    assert "| path | RTT 0 ms, 1 thr | RTT 40 ms, 1 thr |" in text
    distance = text.split("| path | RTT 0 ms, 1 thr | RTT 40 ms, 1 thr |")[1]
    row = next(line for line in distance.splitlines() if line.startswith("| MariaDB TLS rsa4096 |"))
    assert row == "| MariaDB TLS rsa4096 | +97.0% | +29.9% |"
    ssh = next(line for line in distance.splitlines() if line.startswith("| SSH tunnel"))
    assert ssh == "| SSH tunnel aes256-cbc (rsa2048 host key) | +49.9% | +29.9% |"
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
    ("keys", "setting", "cipher", "refusal"),
    [
        ('"ecdsa-p256"', "bulk_ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", None),
        ('"ecdsa-p256"', "bulk_ciphers", "ECDHE-RSA-AES128-GCM-SHA256", "Au=ECDSA"),
        ('"ed25519"', "bulk_ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", None),
        ('"rsa2048"', "bulk_ciphers", "ECDHE-RSA-CHACHA20-POLY1305", None),
        ('"rsa1024", "rsa4096"', "ciphers", "DHE-RSA-AES256-SHA", None),
        # connect rows run every key type with every suite: each must sign for it
        ('"rsa2048", "ecdsa-p256"', "ciphers", "DHE-RSA-AES256-SHA", "with a ecdsa-p256 key"),
        # bulk rows use the first key type only
        ('"rsa2048", "ecdsa-p256"', "bulk_ciphers", "DHE-RSA-AES256-SHA", None),
        # known to OpenSSL, but not in the default list MariaDB's clients offer
        ('"rsa2048"', "ciphers", "DHE-RSA-CAMELLIA256-SHA", "openssl ciphers -s -v"),
    ],
)
def test_a_suite_must_be_offered_and_suit_every_key_type_it_runs_with(
    keys: str, setting: str, cipher: str, refusal: str | None
) -> None:
    from encbench import proc

    if proc.which("openssl") is None:
        pytest.skip("openssl not installed")
    prof = load(f'key_types = [{keys}]\ntls_version = "TLSv1.2"\n{setting} = ["{cipher}"]\n')
    if refusal is None:
        transit_needs.check_ciphers(prof)
    else:
        with pytest.raises(profiles.BadInput, match=re.escape(refusal)) as caught:
            transit_needs.check_ciphers(prof)
        assert f"transit.{setting}" in str(caught.value) and "\n" not in str(caught.value)


def test_the_tls_1_3_suites_pass_the_machine_check_with_any_key_type() -> None:
    from encbench import proc

    if proc.which("openssl") is None:
        pytest.skip("openssl not installed")
    suites = ", ".join(f'"{s}"' for s in tls.TLS13_SUITES)
    transit_needs.check_ciphers(load(f'key_types = ["ecdsa-p256"]\nciphers = [{suites}]\n'))


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
    assert "<h3>Rate lost to encryption, by network distance</h3>" in page
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


def test_first_logins_are_mysqls_one_row_per_thread_count_and_refused_elsewhere() -> None:
    body = (
        'tests = ["connect_first"]\nkey_types = ["rsa2048", "rsa4096"]\nconnect_threads = [1, 4]\n'
    )
    mysql = profiles.parse(
        f'name = "t"\nstudies = ["in-transit"]\n[server]\ninstall = "mysql"\n[transit]\n{body}',
        "test",
    )
    found = transit_plan.cells(mysql)
    assert [(c.test, c.key_type, c.cipher, c.threads) for c in found] == [
        ("connect_first", "rsa2048", "", 1),
        ("connect_first", "rsa2048", "", 4),
    ]
    with pytest.raises(
        profiles.BadInput, match=r'connect_first measures MySQL.*server.install = "mysql"'
    ) as e:
        load(body)
    assert "\n" not in str(e.value)
    # A target's first logins would need users and FLUSH PRIVILEGES there.
    first = replace(found[0], key_type=transit_plan.TARGET_KEY)
    assert "FLUSH PRIVILEGES" in (transit_plan.target_skip_reason(first) or "")


def test_each_first_login_of_a_tls_run_is_a_handshake() -> None:
    cell = TransitCell("connect_first", "tls", "rsa2048", "", 0, 1)
    ok = record(cell, 1, "encrypted", 100.0)
    check_run(ok)
    with pytest.raises(ProofError, match="99 TLS handshakes for 100 connections"):
        check_run(replace(ok, tls_handshakes=99))


def test_rows_of_a_suite_mysql_refuses_are_planned_as_not_measured_with_why() -> None:
    body = (
        'key_types = ["rsa2048"]\ntls_version = "TLSv1.2"\n'
        'ciphers = ["DHE-RSA-AES256-SHA", "ECDHE-RSA-AES256-GCM-SHA384"]\n'
        'methods = ["tls", "ssh"]\ntests = ["connect"]\nconnect_threads = [1]\n'
    )
    mysql = profiles.parse(
        f'name = "t"\nstudies = ["in-transit"]\n[server]\ninstall = "mysql"\n[transit]\n{body}',
        "test",
    )
    refused = {
        c.label for c in transit_plan.cells(mysql) if transit_plan.sandbox_skip_reason(c, mysql)
    }
    assert refused == {"connect tls rsa2048 DHE-RSA-AES256-SHA 1 thr"}
    [line] = transit_plan.sandbox_plan_lines(mysql)
    assert "not measured — MySQL refuses to run with DHE-RSA-AES256-SHA" in line
    # This host's MariaDB runs every suite.
    assert transit_plan.sandbox_plan_lines(load(body)) == []


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("run_s = 5\n", "transit.run_s: 5 s of first logins"),
        ('methods = ["ssh"]\n', 'add "tls" to methods'),
    ],
)
def test_first_logins_longer_than_their_users_or_without_tls_are_refused(
    extra: str, words: str
) -> None:
    with pytest.raises(profiles.BadInput, match=re.escape(words)):
        profiles.parse(
            'name = "t"\nstudies = ["in-transit"]\n[server]\ninstall = "mysql"\n[transit]\n'
            f'tests = ["connect_first"]\n{extra}',
            "test",
        )
