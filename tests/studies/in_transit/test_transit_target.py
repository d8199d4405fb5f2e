"""In transit against a user's server ([target]): which cells run and why the others cannot,
the server's certificate as openssl shows it (captured output), and a report whose server
CPU was not measured says so instead of showing a number."""

from __future__ import annotations

import pytest

from encbench.errors import ProofError
from encbench.profiles import profile as profiles
from encbench.proof.server_certificate import describe_key, parse_s_client
from encbench.studies.in_transit import cells as transit_plan
from encbench.studies.in_transit import summary as in_transit
from encbench.studies.in_transit.checks import check_run
from encbench.studies.in_transit.target import tls_unavailable
from tests.helpers import GOLDEN_ROOT
from tests.studies.in_transit.test_transit_plan_and_report import record, transit_report

GOLDEN = GOLDEN_ROOT / "openssl"
TARGET = '[target]\nhost = "db.example"\nuser = "bench"\nssl_ca = "/ca.pem"\n'
WITH_CERT = TARGET + 'ssl_cert = "/c.pem"\nssl_key = "/k.pem"\n'


def load(body: str, target: str = WITH_CERT) -> profiles.Profile:
    text = f'name = "t"\nstudies = ["in-transit"]\n[transit]\n{body}{target}'
    return profiles.parse(text, "test")


SEED = load(
    'tests = ["connect", "oltp_point_select", "bulk"]\nkey_types = ["rsa1024", "rsa4096"]\n'
    'tls_version = "TLSv1.2"\nbulk_ciphers = ["AES256-SHA"]\nmethods = ["tls", "ssh", '
    '"stunnel"]\nconnect_threads = [1]\nquery_threads = [2]\nrtt_ms = [0, 40]\n'
)


def test_a_targets_tls_rows_of_the_first_key_type_run_with_the_servers_own_certificate() -> None:
    cells = transit_plan.cells(SEED)
    measured = [c for c in cells if transit_plan.target_skip_reason(c) is None]
    assert {(c.test, c.key_type, c.rtt_ms, c.cipher) for c in measured} == {
        ("connect", "target", 0, ""),
        ("oltp_point_select", "target", 0, ""),
    }
    assert all(c.method == "tls" for c in measured)


@pytest.mark.parametrize(
    ("method", "key", "cipher", "rtt", "words"),
    [
        ("ssh", "rsa2048", "aes256-ctr", 0, "ssh needs its server end beside the server"),
        ("stunnel", "rsa2048", "", 0, "stunnel needs its server end"),
        ("tls", "rsa4096", "", 0, "other key types need certificates"),
        ("tls", "target", "", 40, "emulated distances need two hosts"),
        ("tls", "target", "AES256-SHA", 0, "ssl_cipher"),
    ],
)
def test_each_cell_a_target_cannot_give_is_skipped_with_its_reason(
    method: str, key: str, cipher: str, rtt: float, words: str
) -> None:
    cell = transit_plan.TransitCell("connect", method, key, cipher, rtt, 1)
    reason = transit_plan.target_skip_reason(cell)
    assert reason is not None and words in reason


def test_every_skipped_cell_of_the_seed_profile_has_a_reason() -> None:
    cells = transit_plan.cells(SEED)
    skipped = [c for c in cells if transit_plan.target_skip_reason(c) is not None]
    assert len(skipped) == len(cells) - 2
    # Without a target nothing is renamed: the sandbox's cells keep their key types.
    sandbox = profiles.parse(
        'name = "t"\nstudies = ["in-transit"]\n[transit]\nkey_types = ["rsa1024"]\n', "test"
    )
    assert all(c.key_type != "target" for c in transit_plan.cells(sandbox))


def spec(target: str) -> profiles.TargetSpec:
    found = load("", target).target
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("target", "have_ssl", "words"),
    [
        ('[target]\nsocket = "/run/m.sock"\nuser = "u"\n', "YES", "unix socket"),
        ('[target]\nhost = "h"\nuser = "u"\n', "YES", "ssl_ca"),
        (TARGET, "YES", "presents a client certificate"),
        (WITH_CERT, "DISABLED", "have_ssl = DISABLED"),
    ],
)
def test_tls_rows_need_tcp_a_ca_a_client_certificate_and_a_server_with_tls(
    target: str, have_ssl: str, words: str
) -> None:
    reason = tls_unavailable(spec(target), {"have_ssl": have_ssl})
    assert reason is not None and words in reason
    assert tls_unavailable(spec(WITH_CERT), {"have_ssl": "YES"}) is None


# MySQL 8.4 and later have no have_ssl: TLS is on when the server has a certificate (its
# own generated one by default) and allows a TLS version.
@pytest.mark.parametrize(
    ("variables", "words"),
    [
        ({"ssl_cert": "server-cert.pem", "tls_version": "TLSv1.2,TLSv1.3"}, None),
        ({"ssl_cert": "", "tls_version": "TLSv1.2,TLSv1.3"}, "no certificate"),
        ({"ssl_cert": "server-cert.pem", "tls_version": ""}, "allows none"),
    ],
)
def test_a_mysql_without_have_ssl_offers_tls_when_it_has_a_certificate(
    variables: dict[str, str], words: str | None
) -> None:
    reason = tls_unavailable(spec(WITH_CERT), variables)
    assert reason == words or (words is not None and reason is not None and words in reason)


def test_the_servers_certificate_and_session_are_read_from_s_client_output() -> None:
    seen = parse_s_client((GOLDEN / "s_client_starttls_mysql.txt").read_text())
    assert seen.certificate_pem.startswith("-----BEGIN CERTIFICATE-----")
    assert seen.certificate_pem.rstrip().endswith("-----END CERTIFICATE-----")
    assert seen.protocol == "TLSv1.3"
    assert seen.cipher == "TLS_AES_256_GCM_SHA384"
    assert seen.verify == "0 (ok)"


def test_the_key_type_is_named_from_the_certificate_text() -> None:
    rsa = (GOLDEN / "x509_text_rsa2048.txt").read_text()
    assert describe_key(rsa) == "rsaEncryption, 2048 bit"
    ec = (GOLDEN / "x509_text_ecdsa_p256.txt").read_text()
    assert describe_key(ec) == "id-ecPublicKey, 256 bit (prime256v1)"


def test_a_report_without_the_servers_cpu_says_not_measured_instead_of_a_number() -> None:
    profile = load('tests = ["connect"]\nconnect_threads = [1]\nmin_rounds = 2\n')
    cell = transit_plan.cells(profile)[0]
    runs = [
        record(cell, n, variant, rate, server_cpu_s=None)  # type: ignore[arg-type]
        for n in range(3)
        for variant, rate in (("plain", 1000.0 + n), ("encrypted", 800.0 + n))
    ]
    state = {"proofs": {}, "skipped": {}, "pki": {}, "target": {"server": "target db:3306"}}
    state["cpu_measurement"] = "not measured: the server's process is not on this host"
    data = in_transit.build(runs, profile, state)
    summary = data.cells[0]
    assert summary.variants is not None
    assert summary.variants.encrypted.server_cpu_ms_per_event.total_s is None
    assert summary.variants.encrypted.encryption_cpu_ms_per_event is None
    assert "encryption_cpu_ms_per_event" not in summary.comparisons
    text = transit_report(data)
    assert "the user's own, target db:3306" in text
    assert "Server CPU: not measured" in text
    row = next(line for line in text.splitlines() if "the target's TLS" in line)
    assert "not measured" in row


def test_on_a_users_shared_server_other_clients_handshakes_do_not_fail_a_plain_run() -> None:
    cell = transit_plan.TransitCell("connect", "tls", "target", "", 0, 1)
    plain = record(cell, 0, "plain", 100.0, tls_handshakes=3)
    with pytest.raises(ProofError):
        check_run(plain)
    check_run(plain, shared=True)
    # Too few for the encrypted side's own connections fails all the same.
    with pytest.raises(ProofError, match="10 TLS handshakes for 100"):
        check_run(record(cell, 0, "encrypted", 100.0, tls_handshakes=10), shared=True)
