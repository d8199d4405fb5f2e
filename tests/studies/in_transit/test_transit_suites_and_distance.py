"""The in-transit study's TLS suites per connect row, its tunnels and per-query rows at a
distance, the proofs that name what was negotiated, and the report's account of the SSH
tunnel's cost: on made-up records and stand-in processes."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import ProofError
from encbench.net import delay, netns, tunnels
from encbench.servers.mariadb import tls
from encbench.servers.target import Connection
from encbench.studies.in_transit import cells as transit_plan
from encbench.studies.in_transit import summary as in_transit
from encbench.studies.in_transit import tunnel_cost
from encbench.studies.in_transit.checks import prove_routes
from encbench.studies.in_transit.client import query_run_s
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.routes import Hosts, Route, RouteMaker
from tests.studies.in_transit.test_transit_plan_and_report import load, record, transit_report

SUITES = load(
    'tests = ["connect", "oltp_point_select", "bulk"]\nkey_types = ["rsa1024", "rsa4096"]\n'
    'tls_version = "TLSv1.2"\nciphers = ["DHE-RSA-AES256-SHA", "ECDHE-RSA-AES256-GCM-SHA384"]\n'
    'methods = ["tls", "ssh"]\nconnect_threads = [1]\nquery_threads = [1]\nrtt_ms = [0, 40]\n'
)


def test_connect_rows_run_every_key_type_with_every_suite_each_configuration_started_once() -> None:
    cells = transit_plan.cells(SUITES)
    connect = {(c.key_type, c.cipher, c.rtt_ms) for c in cells if c.method == "tls"}
    connect &= {(c.key_type, c.cipher, c.rtt_ms) for c in cells if c.test == "connect"}
    assert connect == set(
        itertools.product(
            ["rsa1024", "rsa4096"], ["DHE-RSA-AES256-SHA", "ECDHE-RSA-AES256-GCM-SHA384"], [0, 40]
        )
    )
    # bulk follows `ciphers` (first key type); per-query rows keep the server's default
    assert {c.cipher for c in cells if c.test == "bulk" and c.method == "tls"} == {
        "DHE-RSA-AES256-SHA",
        "ECDHE-RSA-AES256-GCM-SHA384",
    }
    assert {c.cipher for c in cells if c.test == "oltp_point_select"} == {""}
    configs = [transit_plan.server_tls(c, transit_options(SUITES)) for c in cells]
    started = [k for k, _ in itertools.groupby(configs)]
    assert len(started) == len(set(started))  # no configuration is started twice
    # the tunnels join a configuration the native rows need anyway: no restart of their own
    native = {
        transit_plan.server_tls(c, transit_options(SUITES)) for c in cells if c.method == "tls"
    }
    assert {transit_plan.server_tls(c, transit_options(SUITES)) for c in cells} == native


def test_older_profiles_keep_their_bulk_suites_and_the_default_connect_row() -> None:
    old = load(
        'tests = ["connect", "bulk"]\ntls_version = "TLSv1.2"\n'
        'bulk_ciphers = ["ECDHE-RSA-AES128-GCM-SHA256"]\nconnect_threads = [1]\n'
    )
    cells = transit_plan.cells(old)
    assert {(c.test, c.cipher) for c in cells} == {
        ("connect", ""),
        ("bulk", "ECDHE-RSA-AES128-GCM-SHA256"),
    }
    both = load(
        'tests = ["connect", "bulk"]\ntls_version = "TLSv1.2"\nciphers = ["DHE-RSA-AES256-SHA"]\n'
        'bulk_ciphers = ["ECDHE-RSA-AES128-GCM-SHA256"]\nconnect_threads = [1]\n'
    )
    assert {(c.test, c.cipher) for c in transit_plan.cells(both)} == {
        ("connect", "DHE-RSA-AES256-SHA"),
        ("bulk", "ECDHE-RSA-AES128-GCM-SHA256"),
    }


def test_tls_1_3_suites_make_rows_of_a_tls_1_3_server() -> None:
    prof = load('tests = ["connect"]\nciphers = ["TLS_CHACHA20_POLY1305_SHA256"]\n')
    assert {c.cipher for c in transit_plan.cells(prof)} == {"TLS_CHACHA20_POLY1305_SHA256"}


def test_distance_tests_take_per_query_rows_and_every_tunnel_to_every_distance() -> None:
    prof = load(
        'tests = ["connect", "oltp_point_select", "bulk"]\n'
        'distance_tests = ["connect", "oltp_point_select"]\nmethods = ["tls", "stunnel", "ssh"]\n'
        "connect_threads = [1]\nquery_threads = [4]\nrtt_ms = [0, 170]\n"
    )
    found = {(c.test, c.method, c.rtt_ms) for c in transit_plan.cells(prof)}
    for method in ("tls", "stunnel", "ssh"):
        assert {("connect", method, 0), ("connect", method, 170)} <= found
        assert ("bulk", method, 0) in found and ("bulk", method, 170) not in found
    assert {("oltp_point_select", "tls", 0), ("oltp_point_select", "tls", 170)} <= found


def test_a_per_query_run_at_a_distance_lasts_its_round_trips() -> None:
    assert query_run_s(0) == 0
    assert query_run_s(40) == 2
    assert query_run_s(170) == 9


# -- the proofs ------------------------------------------------------------------------------
def tls_routes() -> dict[str, Route]:
    where = Connection.tcp("127.0.0.1", 3306, "u", "d")
    return {"plain": Route(where, ssl=False), "encrypted": Route(where, ssl=True)}


def test_a_row_whose_connection_negotiated_another_suite_fails_its_proof() -> None:
    cell = TransitCell("connect", "tls", "rsa4096", "DHE-RSA-AES256-SHA", 0, 1)
    plain = tls.SessionTls("", "")
    asked = tls.SessionTls("TLSv1.2", "DHE-RSA-AES256-SHA")
    proof = prove_routes(cell, tls_routes(), {"plain": plain, "encrypted": asked}, "TLSv1.2")
    assert proof == {"plain": "plain", "encrypted": "TLSv1.2 DHE-RSA-AES256-SHA"}
    other = tls.SessionTls("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384")
    with pytest.raises(ProofError, match="negotiated ECDHE-RSA-AES256-GCM-SHA384, not DHE"):
        prove_routes(cell, tls_routes(), {"plain": plain, "encrypted": other}, "TLSv1.2")
    newer = tls.SessionTls("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    with pytest.raises(ProofError, match=r"negotiated TLSv1\.3, not TLSv1\.2"):
        prove_routes(cell, tls_routes(), {"plain": plain, "encrypted": newer}, "TLSv1.2")


SSH_LOG = (
    "debug1: kex: algorithm: {kex}\n"
    "debug1: kex: host key algorithm: rsa-sha2-512\n"
    "debug1: kex: client->server cipher: {cipher} MAC: {mac} compression: none\n"
    "debug1: channel 1: new direct-tcpip [direct-tcpip]\n"
)


@pytest.mark.parametrize(
    ("cipher", "mac", "shown"),
    [
        ("aes128-ctr", "umac-64-etm@openssh.com", "aes128-ctr (MAC umac-64-etm@openssh.com; "),
        ("aes256-gcm@openssh.com", "<implicit>", "aes256-gcm@openssh.com (key exchange"),
        ("chacha20-poly1305@openssh.com", "<implicit>", "chacha20-poly1305@openssh.com (key"),
    ],
)
def test_an_ssh_row_records_what_its_tunnel_negotiated_and_refuses_another_cipher(
    tmp_path: Path, cipher: str, mac: str, shown: str
) -> None:
    log = tmp_path / "ssh.log"
    log.write_text(SSH_LOG.format(kex="curve25519-sha256", cipher=cipher, mac=mac))
    tunnel = tunnels.Tunnel(1, (), log, tunnels.SSH_CHANNEL)
    where = Connection.tcp("127.0.0.1", 3306, "u", "d")
    routes = {"plain": Route(where, ssl=False), "encrypted": Route(where, False, [], tunnel)}
    sessions = {"plain": tls.SessionTls("", ""), "encrypted": tls.SessionTls("", "")}
    cell = TransitCell("connect", "ssh", "rsa4096", cipher, 40, 1)
    proof = prove_routes(cell, routes, sessions, "TLSv1.2")["encrypted"]
    assert proof.startswith(f"ssh: {shown}")
    assert proof.endswith("key exchange curve25519-sha256, rsa-sha2-512 host key, once per tunnel)")
    other = TransitCell("connect", "ssh", "rsa4096", "aes256-cbc", 40, 1)
    with pytest.raises(ProofError, match=f"ssh negotiated '{cipher}', not aes256-cbc"):
        prove_routes(other, routes, sessions, "TLSv1.2")


# -- the routes at a distance ------------------------------------------------------------------
@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, Any]]]:
    """Relays and tunnels that record how they were asked for instead of starting."""
    asked: dict[str, list[dict[str, Any]]] = {"relay": [], "ssh": [], "stunnel": []}
    ports = itertools.count(6000)

    @contextlib.contextmanager
    def relay(run_dir: Path, **kw: Any) -> Iterator[tuple[str, int]]:
        asked["relay"].append(kw)
        yield ("127.0.0.1", next(ports))

    def tunnel(name: str) -> Any:
        @contextlib.contextmanager
        def start(run_dir: Path, *args: Any, **kw: Any) -> Iterator[tunnels.Tunnel]:
            asked[name].append(kw)
            yield tunnels.Tunnel(7000, (), run_dir / "log", tunnels.SSH_CHANNEL)

        return start

    monkeypatch.setattr(netns, "set_delay", lambda link, rtt: "relay")
    monkeypatch.setattr(delay, "relay", relay)
    monkeypatch.setattr(tunnels, "ssh_tunnel", tunnel("ssh"))
    monkeypatch.setattr(tunnels, "stunnel", tunnel("stunnel"))
    monkeypatch.setattr(tunnels, "free_port", lambda host="127.0.0.1": 5555)
    return asked


def route_maker(tmp_path: Path) -> RouteMaker:
    link = netns.Link("ab", "encb-ab-c", "encb-ab-s", "10.213.0.1", "10.213.0.2", 0, None, 1)
    hosts = Hosts(link, ["in-server"], ["in-client"])
    return RouteMaker(tmp_path, hosts, 3306, "d", "TLSv1.3", lambda key: None, {})  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("method", ["ssh", "stunnel"])
def test_a_tunnel_at_a_distance_has_its_server_end_beside_the_server_and_its_client_across(
    tmp_path: Path, stand_ins: dict[str, list[dict[str, Any]]], method: str
) -> None:
    cipher = "aes128-ctr" if method == "ssh" else ""
    cell = TransitCell("connect", method, "rsa2048", cipher, 40, 1)
    with route_maker(tmp_path).routes(cell) as routes:
        plain, encrypted = routes["plain"], routes["encrypted"]
    # plain TCP: from the client's host through a relay to the server's link address
    assert plain.prefix == ["in-client"] and plain.target.port == 6000
    assert stand_ins["relay"][0]["upstream"] == ("10.213.0.2", 3306)
    # the tunnel: its own relay to its server end's port on the server's link address
    assert stand_ins["relay"][1] == {
        "upstream": ("10.213.0.2", 5555),
        "rtt_ms": 40,
        "prefix": ["in-client"],
    }
    (asked,) = stand_ins[method]
    listen = "sshd_listen" if method == "ssh" else "server_listen"
    assert asked[listen] == ("10.213.0.2", 5555) and asked["client_dial"] == ("127.0.0.1", 6001)
    assert asked["server_prefix"] == ["in-server"] and asked["client_prefix"] == ["in-client"]
    assert asked["db"] == ("127.0.0.1", 3306)  # the server end reaches MariaDB on its host
    # the clients dial the tunnel's client end on their own host
    assert encrypted.prefix == ["in-client"] and encrypted.target.host == "127.0.0.1"
    assert encrypted.target.port == 7000 and encrypted.tunnel is not None


def test_a_tunnel_on_loopback_keeps_both_ends_beside_the_server(
    tmp_path: Path, stand_ins: dict[str, list[dict[str, Any]]]
) -> None:
    cell = TransitCell("connect", "ssh", "rsa2048", "aes128-ctr", 0, 1)
    with route_maker(tmp_path).routes(cell) as routes:
        assert routes["encrypted"].prefix == ["in-server"]
    (asked,) = stand_ins["ssh"]
    assert asked["sshd_listen"] is None and asked["client_dial"] is None
    assert asked["client_prefix"] == ["in-server"] and stand_ins["relay"] == []


# -- the SSH tunnel's cost in the report ----------------------------------------------------------
COST = load(
    'tests = ["connect"]\nkey_types = ["rsa4096"]\ntls_version = "TLSv1.2"\n'
    'ciphers = ["DHE-RSA-AES256-SHA"]\nmethods = ["tls", "ssh"]\nssh_ciphers = ["aes256-cbc"]\n'
    "connect_threads = [1]\nrtt_ms = [0, 40]\nmin_rounds = 2\n"
)


def cost_runs(ssh_kept: float) -> list[TransitRecord]:
    """Plain 3,000 conn/s on one host; TLS keeps 2% at about 4.9 ms more server CPU a
    connection, the tunnel `ssh_kept` of it at 0.4 ms of its own; at 40 ms the tunnel is the
    faster path."""
    runs = []
    for cell in transit_plan.cells(COST):
        near = cell.rtt_ms == 0
        for n in range(4):
            plain = (3000.0 if near else 8.0) * (1 + 0.01 * n)
            kept = (0.02 if cell.method == "tls" else ssh_kept) if near else 0.9
            if not near and cell.method == "ssh":
                kept = 1.2
            rate = plain * kept * (1 + 0.002 * n)
            runs.append(record(cell, n, "plain", plain, server_cpu_s=plain * 0.0001))
            tls_cpu = rate * 0.005 if cell.method == "tls" else rate * 0.0001
            tunnel_cpu = rate * 0.0004 if cell.method == "ssh" else 0.0
            runs.append(
                record(cell, n, "encrypted", rate, server_cpu_s=tls_cpu, tunnel_cpu_s=tunnel_cpu)  # type: ignore[arg-type]
            )
    return runs


def test_the_report_explains_the_tunnels_cost_from_the_measured_rows() -> None:
    lines = tunnel_cost.lines(in_transit.build(cost_runs(0.5), COST, {}).cells)
    near, far = lines
    assert near.startswith(
        "SSH tunnel, new connections on one host (1 thr): aes256-cbc 50.1% of the plain rate; "
        "MariaDB TLS rsa4096 DHE-RSA-AES256-SHA 2.0% of the plain rate."
    )
    assert "(ssh and sshd) used 0.400 ms of CPU" in near
    assert "with the rsa4096 key cost the server 4.928 ms more than a plain connect" in near
    assert "(12.3 times the tunnel's)" in near
    assert "kept 48% of the plain rate and built-in SSL 2.2%: the same ordering as here." in near
    assert far.startswith("SSH tunnel, new connections at RTT 40 ms (1 thr): aes256-cbc 20%")
    assert "MariaDB TLS rsa4096 DHE-RSA-AES256-SHA 90.3% of the plain rate" in far
    text = transit_report(in_transit.build(cost_runs(0.5), COST, {}))
    assert "### The SSH tunnel's cost on new connections" in text
    assert "seed" not in text.lower()


def test_a_tunnel_costlier_than_tls_is_said_to_reverse_the_published_ordering() -> None:
    lines = tunnel_cost.lines(in_transit.build(cost_runs(0.01), COST, {}).cells)
    assert "aes256-cbc 1.0% of the plain rate" in lines[0]
    assert "here the ordering is the opposite." in lines[0]


def test_without_an_ssh_connect_row_the_report_says_nothing_of_tunnels() -> None:
    prof = load('tests = ["connect"]\nconnect_threads = [1]\nmin_rounds = 2\n')
    runs = [
        record(cell, n, v, 100.0 if v == "plain" else 10.0)
        for cell in transit_plan.cells(prof)
        for n in range(4)
        for v in ("plain", "encrypted")
    ]
    summary = in_transit.build(runs, prof, {})
    assert tunnel_cost.lines(summary.cells) == []
    assert "SSH tunnel's cost" not in transit_report(summary)
