"""Unit tests of the transit building blocks: bad input, rendered options, and parsers on
golden outputs of the real tools (tests/golden/transit/)."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import BadInput, ProofError
from encbench.net import netns, tunnels
from encbench.proof import tls
from encbench.servers import pki
from encbench.servers.target import Connection
from encbench.workloads import connrate, sysbench
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "transit"


def fake_pki(tmp_path: Path) -> pki.Pki:
    return pki.Pki(
        key_type="rsa2048",
        directory=tmp_path,
        ca_cert=tmp_path / "ca-cert.pem",
        server_cert=tmp_path / "server-cert.pem",
        server_key=tmp_path / "server-key.pem",
        client_cert=tmp_path / "client-cert.pem",
        client_key=tmp_path / "client-key.pem",
        server_ips=("127.0.0.1",),
    )


def test_an_unknown_key_type_is_refused_in_one_line_naming_the_choices(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"unknown TLS key type 'rsa512'.*rsa2048.*ecdsa-p256") as e:
        pki.generate(tmp_path, "rsa512")
    assert "\n" not in str(e.value)


def test_a_generated_pki_keeps_keys_private_and_names_every_server_address(tmp_path: Path) -> None:
    made = pki.generate(tmp_path, "ecdsa-p256", server_ips=("127.0.0.1", "10.213.0.2"))
    for key in (made.server_key, made.client_key, made.directory / "ca-key.pem"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(made.directory.parent.stat().st_mode) == 0o700
    text = pki.proc.run(
        ["openssl", "x509", "-in", str(made.server_cert), "-noout", "-ext", "subjectAltName"],
        phase="test",
        timeout_s=30,
    ).stdout
    assert "IP Address:127.0.0.1" in text and "IP Address:10.213.0.2" in text
    assert "DNS:localhost" in text
    workdir = pki.sysbench_dir(made, tmp_path / "sysbench")
    assert sorted(p.name for p in workdir.iterdir()) == sorted(pki.SYSBENCH_FILES)
    assert stat.S_IMODE((workdir / "client-key.pem").stat().st_mode) == 0o600


def test_tls_options_name_the_generated_files_and_the_version(tmp_path: Path) -> None:
    options = tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.2", cipher="AES256-SHA")
    assert options["ssl_cert"].endswith("server-cert.pem")
    assert options["ssl_key"].endswith("server-key.pem")
    assert options["ssl_ca"].endswith("ca-cert.pem")
    assert options["tls_version"] == "TLSv1.2"
    assert options["ssl_cipher"] == "AES256-SHA"
    assert "require_secure_transport" not in options


@pytest.mark.parametrize("version", ["TLSv1.0", "TLSv1.1", "SSLv3", "tls1.3"])
def test_a_tls_version_the_server_cannot_use_is_refused_in_one_line(
    tmp_path: Path, version: str
) -> None:
    with pytest.raises(BadInput, match=r"TLSv1\.2, TLSv1\.3") as e:
        tls.server_options(fake_pki(tmp_path), tls_version=version)
    assert "\n" not in str(e.value)


def test_a_cipher_with_tls13_is_refused_rather_than_silently_ignored(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"TLSv1\.2"):
        tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.3", cipher="AES256-SHA")


def test_the_lua_probe_output_proves_tls_and_plain() -> None:
    encrypted = tls.parse_session((GOLDEN / "sysbench_connect_proof_tls.txt").read_text())
    assert encrypted == tls.SessionTls("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    tls.prove(encrypted, encrypted=True, what="tls run")
    plain = tls.parse_session((GOLDEN / "sysbench_connect_proof_plain.txt").read_text())
    assert not plain.encrypted
    tls.prove(plain, encrypted=False, what="plain run")
    with pytest.raises(ProofError, match="expected plain"):
        tls.prove(encrypted, encrypted=False, what="plain run")
    with pytest.raises(ProofError, match="expected TLS"):
        tls.prove(plain, encrypted=True, what="tls run")


def test_the_mariadb_client_output_parses_like_the_lua_probe() -> None:
    text = (GOLDEN / "mariadb_client_proof_tls.txt").read_text()
    assert tls.parse_session(text) == tls.SessionTls("TLSv1.3", "TLS_AES_256_GCM_SHA384")


def test_output_without_the_ssl_rows_is_no_proof() -> None:
    with pytest.raises(ProofError):
        tls.parse_session("SQL statistics:\n")


def test_tls_counters_read_missing_rows_as_zero_and_subtract() -> None:
    before = tls.counters({"Ssl_accepts": "3", "Ssl_finished_accepts": "3"})
    after = tls.counters({"Ssl_accepts": "13", "Ssl_finished_accepts": "12"})
    delta = after.minus(before)
    assert (delta.accepts, delta.finished_accepts, delta.session_cache_hits) == (10, 9, 0)


def test_connect_lua_report_reads_as_connections_per_second() -> None:

    report = sysbench.parse_report((GOLDEN / "sysbench_connect_run.txt").read_text())
    assert report.transactions == 1250 and report.tps == pytest.approx(312.08)


def test_connloop_result_line_parses() -> None:
    rate = connrate.parse_connloop((GOLDEN / "connloop.txt").read_text(), ssl=True, threads=2)
    assert (rate.connections, rate.per_s, rate.errors) == (1224, pytest.approx(305.71), 0)


def test_the_sysbench_command_uses_tcp_the_lua_script_and_no_password() -> None:
    target = Connection.tcp("127.0.0.1", 3307, "bench", "sbtest")
    argv = connrate.sysbench_args(target, ssl=True, threads=4, time_s=5)
    assert "--mysql-ssl=on" in argv and "--mysql-port=3307" in argv
    assert argv[-2] == str(connrate.LUA_SCRIPT) and argv[-1] == "run"
    assert not any(arg.startswith("--mysql-password") for arg in argv)
    with pytest.raises(BadInput):
        connrate.sysbench_args(target, ssl=False, threads=0, time_s=5)


@pytest.mark.parametrize("rtt_ms", [-1.0, 10_001.0])
def test_a_delay_out_of_range_is_refused(rtt_ms: float) -> None:
    with pytest.raises(BadInput, match="out of range"), netns.two_hosts(rtt_ms):
        pass


def test_an_unknown_ssh_cipher_is_refused_naming_the_choices(tmp_path: Path) -> None:
    tunnel = tunnels.ssh_tunnel(tmp_path, db=("127.0.0.1", 3306), cipher="rot13")
    with pytest.raises(BadInput, match="aes256-ctr"), tunnel:
        pass


def test_the_sshd_config_has_one_cipher_no_pam_and_forwards_only_to_the_server() -> None:
    text = tunnels.sshd_config(
        listen=("127.0.0.1", 2222),
        host_key=Path("/x/host"),
        authorized_keys=Path("/x/ak"),
        cipher="aes256-ctr",
        user="bench",
        db=("127.0.0.1", 3306),
    )
    assert "Ciphers aes256-ctr\n" in text and "UsePAM no\n" in text
    assert "PermitOpen 127.0.0.1:3306\n" in text and "PasswordAuthentication no\n" in text


def test_the_stunnel_client_verifies_the_server_against_the_run_ca(tmp_path: Path) -> None:
    text = tunnels.stunnel_conf(
        client=True,
        accept=("127.0.0.1", 4000),
        connect=("10.213.0.2", 4001),
        pki=fake_pki(tmp_path),
        log=tmp_path / "log",
    )
    assert "client = yes" in text and "verifyChain = yes" in text
    assert "checkIP = 10.213.0.2" in text and "foreground = yes" in text


def test_behind_a_relay_the_stunnel_client_still_checks_the_servers_address(
    tmp_path: Path,
) -> None:
    text = tunnels.stunnel_conf(
        client=True,
        accept=("127.0.0.1", 4000),
        connect=("127.0.0.1", 4100),  # a delay relay in the client's namespace
        pki=fake_pki(tmp_path),
        log=tmp_path / "log",
        check_ip="10.213.0.2",
    )
    assert "connect = 127.0.0.1:4100" in text and "checkIP = 10.213.0.2" in text


@pytest.mark.parametrize("suite", tls.TLS13_SUITES)
def test_a_tls13_suite_is_set_on_a_tls13_server_and_refused_on_a_tls12_one(
    tmp_path: Path, suite: str
) -> None:
    options = tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.3", cipher=suite)
    assert options["ssl_cipher"] == suite and options["tls_version"] == "TLSv1.3"
    with pytest.raises(BadInput, match=r'needs tls_version = "TLSv1\.3", not "TLSv1\.2"'):
        tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.2", cipher=suite)


def test_a_tls13_suite_the_clients_never_offer_is_refused_naming_those_they_do(
    tmp_path: Path,
) -> None:
    with pytest.raises(BadInput, match="TLS_AES_256_GCM_SHA384, TLS_CHACHA20") as e:
        tls.server_options(
            fake_pki(tmp_path), tls_version="TLSv1.3", cipher="TLS_AES_128_CCM_SHA256"
        )
    assert "\n" not in str(e.value)


def test_the_ssh_client_log_names_mac_key_exchange_and_host_key(tmp_path: Path) -> None:
    log = tmp_path / "ssh.log"
    log.write_text(
        "debug1: kex: algorithm: sntrup761x25519-sha512\n"
        "debug1: kex: host key algorithm: rsa-sha2-512\n"
        "debug1: kex: server->client cipher: aes128-ctr MAC: umac-64-etm@openssh.com "
        "compression: none\n"
        "debug1: kex: client->server cipher: aes128-ctr MAC: umac-64-etm@openssh.com "
        "compression: none\n"
    )
    tunnel = tunnels.Tunnel(1, (), log, tunnels.SSH_CHANNEL)
    assert tunnels.ssh_cipher(tunnel) == "aes128-ctr"
    assert tunnels.ssh_terms(tunnel) == {
        "mac": "umac-64-etm@openssh.com",
        "kex": "sntrup761x25519-sha512",
        "host_key": "rsa-sha2-512",
    }
    log.unlink()
    assert tunnels.ssh_terms(tunnel) == {"mac": "", "kex": "", "host_key": ""}


def test_the_servers_own_tls_settings_must_be_those_asked_for() -> None:
    tls.check_server_tls(("YES", "TLSv1.2", "DHE-RSA-AES256-SHA"), "TLSv1.2", "DHE-RSA-AES256-SHA")
    tls.check_server_tls(("YES", "TLSv1.3", ""), "TLSv1.3", None)  # the server's default suite
    with pytest.raises(ProofError, match="TLS is DISABLED"):
        tls.check_server_tls(("DISABLED", "TLSv1.2", "DHE-RSA-AES256-SHA"), "TLSv1.2", "x")
    with pytest.raises(ProofError, match=re.escape("tls_version 'TLSv1.2,TLSv1.3', not 'TLSv1.2'")):
        tls.check_server_tls(("YES", "TLSv1.2,TLSv1.3", ""), "TLSv1.2", None)
    with pytest.raises(ProofError, match="suite 'AES256-SHA', not 'DHE-RSA-AES256-SHA'"):
        tls.check_server_tls(("YES", "TLSv1.2", "AES256-SHA"), "TLSv1.2", "DHE-RSA-AES256-SHA")


def test_mysql_limits_tls13_by_tls_ciphersuites_and_tls12_by_ssl_cipher(tmp_path: Path) -> None:
    tls13 = tls.server_options(
        fake_pki(tmp_path), tls_version="TLSv1.3", cipher="TLS_AES_256_GCM_SHA384", mysql=True
    )
    assert tls13["tls_ciphersuites"] == "TLS_AES_256_GCM_SHA384" and "ssl_cipher" not in tls13
    tls12 = tls.server_options(
        fake_pki(tmp_path), tls_version="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256", mysql=True
    )
    assert tls12["ssl_cipher"] == "ECDHE-RSA-AES128-GCM-SHA256"


class _Answers:
    """A server that answers the TLS queries with what it was given."""

    def __init__(self, cert_dates: str, row: tuple[str, ...]) -> None:
        self.cert_dates, self.row = cert_dates, row

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if sql == tls.MYSQL_CERT_SQL:
            return [("Ssl_server_not_after", self.cert_dates)]
        assert sql == tls.MYSQL_TLS_SQL
        return [self.row]


def test_a_mysql_servers_tls_is_on_when_it_loaded_a_certificate_and_its_suite_per_version() -> None:
    loaded = "Nov 30 20:04:27 2026 GMT"
    row = ("TLSv1.3", "ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_256_GCM_SHA384")
    assert tls.server_tls(_Answers(loaded, row), mysql=True) == (
        "YES",
        "TLSv1.3",
        "TLS_AES_256_GCM_SHA384",
    )
    tls12 = ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", "")
    assert tls.server_tls(_Answers(loaded, tls12), mysql=True)[2] == "ECDHE-RSA-AES128-GCM-SHA256"
    off = tls.server_tls(_Answers("", row), mysql=True)
    with pytest.raises(ProofError, match="no certificate loaded"):
        tls.check_server_tls(off, "TLSv1.3", None)


def test_mysql_refuses_the_2013_suite_but_not_its_own_nor_its_default() -> None:
    refused = tls.mysql_refuses("DHE-RSA-AES256-SHA")
    assert refused is not None and "refuses to run with DHE-RSA-AES256-SHA" in refused
    assert tls.mysql_refuses("ECDHE-RSA-AES256-GCM-SHA384") is None
    assert tls.mysql_refuses("TLS_AES_256_GCM_SHA384") is None
    assert tls.mysql_refuses("") is None  # the server's default suite
