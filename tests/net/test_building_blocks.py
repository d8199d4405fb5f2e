"""Unit tests of the transit building blocks: bad input, rendered options, and parsers on
golden outputs of the real tools (tests/golden/transit/)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.net import netns, tunnels
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
