"""The delay relay: the round trips it adds on loopback and between two emulated hosts, and
that it never outlives its context manager."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import BadInput
from encbench.net import delay, netns, tunnels
from tests.helpers import processes_owned_by
from tests.net.test_netns import needs_netns

# Speaks first like mariadbd (a greeting on accept), then echoes until EOF and closes.
SERVER = textwrap.dedent(
    """
    import socket, sys, threading

    def serve(conn):
        with conn:
            conn.sendall(b"hello\\n")
            while data := conn.recv(65536):
                conn.sendall(data)

    listener = socket.create_server((sys.argv[1], int(sys.argv[2])))
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    """
)

# Measures inside its own process, so that it can run in the client namespace.
CLIENT = textwrap.dedent(
    """
    import json, socket, sys, time

    def read(conn, n):
        got = b""
        while len(got) < n:
            chunk = conn.recv(n - len(got))
            assert chunk, "connection closed early"
            got += chunk
        return got

    start = time.perf_counter()
    conn = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    assert read(conn, 6) == b"hello\\n"
    result = {"greeting_ms": (time.perf_counter() - start) * 1000, "echo_ms": []}
    for _ in range(3):
        start = time.perf_counter()
        conn.sendall(b"ping")
        assert read(conn, 4) == b"ping"
        result["echo_ms"].append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    conn.shutdown(socket.SHUT_WR)
    assert conn.recv(64) == b""
    result["close_ms"] = (time.perf_counter() - start) * 1000
    print(json.dumps(result))
    """
)


def relays() -> list[str]:
    return [p for p in processes_owned_by(os.getpid()) if "encbench.net.delay" in p]


def measure(host: str, port: int, prefix: Sequence[str] = ()) -> dict[str, Any]:
    out = subprocess.run(
        [*prefix, sys.executable, "-c", CLIENT, host, str(port)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    result: dict[str, Any] = json.loads(out)
    print(result)  # shown with -s: the timings this machine gave
    return result


@pytest.fixture
def echo_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    port = tunnels.free_port()
    server = tunnels.Daemon(
        "echo", [sys.executable, "-c", SERVER, "127.0.0.1", str(port)], tmp_path / "echo.log", port
    )
    with tunnels.running(server):
        yield "127.0.0.1", port


# -- arguments --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flag", "value", "complaint"),
    [
        ("--rtt-ms", "-5", "out of range"),
        ("--rtt-ms", "10001", "out of range"),
        ("--rtt-ms", "nan", "out of range"),
        ("--rtt-ms", "fast", "could not convert"),
        ("--connect", "localhost", "not HOST:PORT"),
        ("--listen", "127.0.0.1:70000", "not HOST:PORT"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(flag: str, value: str, complaint: str) -> None:
    args = {"--listen": "127.0.0.1:1", "--connect": "127.0.0.1:2", "--rtt-ms": "10"}
    args[flag] = value
    argv = [sys.executable, "-m", "encbench.net.delay"]
    argv += [part for item in args.items() for part in item]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and complaint in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_helper_refuses_a_bad_delay_before_starting_anything(tmp_path: Path) -> None:
    with (
        pytest.raises(BadInput, match="out of range"),
        delay.relay(tmp_path, upstream=("127.0.0.1", 1), rtt_ms=-1),
    ):
        pass
    assert relays() == []


# -- on loopback ------------------------------------------------------------------------------
@pytest.mark.integration
def test_a_100ms_relay_delays_greeting_by_two_rtts_and_each_exchange_by_one(
    tmp_path: Path, echo_server: tuple[str, int]
) -> None:
    with delay.relay(tmp_path, upstream=echo_server, rtt_ms=100) as (host, port):
        assert len(relays()) == 1
        result = measure(host, port)
    assert 190 <= result["greeting_ms"] <= 400
    assert all(95 <= ms <= 300 for ms in result["echo_ms"])
    # The half-close reaches the server after R/2 and its close comes back after R/2.
    assert 95 <= result["close_ms"] <= 300
    assert relays() == []


@pytest.mark.integration
def test_a_zero_delay_relay_is_a_plain_fast_relay(
    tmp_path: Path, echo_server: tuple[str, int]
) -> None:
    with delay.relay(tmp_path, upstream=echo_server, rtt_ms=0) as (host, port):
        result = measure(host, port)
    # Far below any delay the other tests set (100 ms), with room for a busy machine.
    assert result["greeting_ms"] < 90
    assert all(ms < 90 for ms in result["echo_ms"])


@pytest.mark.integration
def test_bytes_in_flight_are_pipelined_not_sent_one_delay_at_a_time(
    tmp_path: Path, echo_server: tuple[str, int]
) -> None:
    with (
        delay.relay(tmp_path, upstream=echo_server, rtt_ms=100) as address,
        socket.create_connection(address, timeout=10) as conn,
    ):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        assert conn.recv(6) == b"hello\n"
        start = time.perf_counter()
        for _ in range(5):
            conn.sendall(b"ping")
            time.sleep(0.02)
        got = b""
        while len(got) < 20:
            got += conn.recv(64)
        elapsed_ms = (time.perf_counter() - start) * 1000
    # The last ping left at ~80 ms and pays one RTT (~180 ms); five RTTs in a row would be
    # 500 ms or more.
    assert got == b"ping" * 5 and elapsed_ms < 450


@pytest.mark.integration
def test_a_bulk_transfer_beyond_the_queue_limit_arrives_intact(
    tmp_path: Path, echo_server: tuple[str, int]
) -> None:
    payload = os.urandom(3 * delay.HIGH_WATER)
    with (
        delay.relay(tmp_path, upstream=echo_server, rtt_ms=20) as address,
        socket.create_connection(address, timeout=30) as conn,
    ):
        assert conn.recv(6) == b"hello\n"
        # Send while reading, or the echo's back-pressure would block both sides.
        sender = threading.Thread(target=conn.sendall, args=(payload,))
        sender.start()
        received = hashlib.sha256()
        count = 0
        while count < len(payload):
            chunk = conn.recv(1 << 20)
            assert chunk
            received.update(chunk)
            count += len(chunk)
        sender.join()
    assert count == len(payload)
    assert received.digest() == hashlib.sha256(payload).digest()


@pytest.mark.integration
def test_a_refused_upstream_closes_the_client_instead_of_hanging(tmp_path: Path) -> None:
    nobody = ("127.0.0.1", tunnels.free_port())
    with (
        delay.relay(tmp_path, upstream=nobody, rtt_ms=40) as address,
        socket.create_connection(address, timeout=10) as conn,
    ):
        start = time.perf_counter()
        with contextlib.suppress(ConnectionResetError):
            assert conn.recv(64) == b""
        # Found out when the upstream connect fails, 1.5 RTT after accepting.
        assert (time.perf_counter() - start) * 1000 < 1000


@pytest.mark.integration
def test_the_relay_is_gone_after_an_exception_in_the_body(
    tmp_path: Path, echo_server: tuple[str, int]
) -> None:
    with pytest.raises(RuntimeError), delay.relay(tmp_path, upstream=echo_server, rtt_ms=50):
        assert len(relays()) == 1
        raise RuntimeError("boom")
    assert relays() == []


@pytest.mark.integration
def test_sigterm_ends_the_relay_with_exit_0_and_a_silent_log(
    echo_server: tuple[str, int],
) -> None:
    port = tunnels.free_port()
    argv = [sys.executable, "-m", "encbench.net.delay", "--listen", f"127.0.0.1:{port}"]
    argv += ["--connect", f"{echo_server[0]}:{echo_server[1]}", "--rtt-ms", "10"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not tunnels.listening(child.pid, port):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.02)
        # One finished and one open connection: neither may leave a word in the log.
        with socket.create_connection(("127.0.0.1", port)) as conn:
            assert conn.recv(6) == b"hello\n"
        conn = socket.create_connection(("127.0.0.1", port))
        assert conn.recv(6) == b"hello\n"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=10)
        conn.close()
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0 and out == "" and err == ""


# -- between two emulated hosts ---------------------------------------------------------------


@pytest.mark.integration
@needs_netns
def test_an_80ms_link_delays_a_client_in_its_namespace_through_the_relay(
    tmp_path: Path, state_dir: Path
) -> None:
    with netns.two_hosts(rtt_ms=80) as link:
        qdisc = netns.run_in(link.client_ns, ["tc", "qdisc", "show"], phase="test")
        # netem where the kernel has it, else the relay (this kernel: CONFIG_NET_SCH_NETEM off).
        assert link.delay_method == ("netem" if "netem" in qdisc else "relay")
        assert netns.recorded() == [link]
        port = tunnels.free_port()
        argv = [*netns.exec_prefix(link.server_ns), sys.executable, "-c", SERVER]
        server = tunnels.Daemon(
            "echo", [*argv, link.server_addr, str(port)], tmp_path / "echo.log", port
        )
        # With netem the link already delays: the relay then only relays.
        relay_rtt = link.rtt_ms if link.delay_method == "relay" else 0
        client_prefix = netns.exec_prefix(link.client_ns)
        with (
            tunnels.running(server),
            delay.relay(
                tmp_path,
                upstream=(link.server_addr, port),
                rtt_ms=relay_rtt,
                prefix=client_prefix,
            ) as (host, relay_port),
        ):
            result = measure(host, relay_port, client_prefix)
            assert len(relays()) == 1
    assert 150 <= result["greeting_ms"] <= 350
    assert all(75 <= ms <= 250 for ms in result["echo_ms"])
    assert [ns for ns in netns.namespaces() if link.id in ns] == []
    assert relays() == []
    assert netns.recorded() == []


def test_old_link_records_without_a_delay_method_are_still_read(state_dir: Path) -> None:
    record: dict[str, object] = {
        "id": "def456",
        "client_ns": "encb-def456-c",
        "server_ns": "encb-def456-s",
    }
    record |= {"client_addr": "a", "server_addr": "b", "rtt_ms": 40, "rate_mbit": None}
    (netns.registry_dir() / "def456.json").write_text(json.dumps(record | {"owner_pid": 1}))
    [link] = netns.recorded()
    assert link.delay_method == "netem"


@pytest.mark.integration
@needs_netns
def test_without_netem_a_rate_limit_still_applies_on_a_relay_link(state_dir: Path) -> None:
    with netns.two_hosts(rtt_ms=40, rate_mbit=100) as link:
        qdisc = netns.run_in(link.client_ns, ["tc", "qdisc", "show"], phase="test")
    if link.delay_method == "netem":
        pytest.skip("this kernel has netem: the rate is netem's own option")
    assert link.delay_method == "relay"
    assert "qdisc tbf" in qdisc and "rate 100Mbit" in qdisc
