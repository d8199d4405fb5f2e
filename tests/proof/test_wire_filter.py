"""The capture's filter in the kernel (proof/wire.port_filter): on this host's loopback it
passes the segments of its one port and drops the rest, so traffic of other programs beside
it never reaches the capture."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from encbench.servers.local import free_port

MARKER = b"encbench-filter-marker-7f3a"


def _serve_once(listener: socket.socket) -> None:
    conn, _ = listener.accept()
    with conn:
        while conn.recv(1 << 16):
            pass


def _send(port: int, payload: bytes) -> None:
    listener = socket.create_server(("127.0.0.1", port))
    server = threading.Thread(target=_serve_once, args=(listener,))
    server.start()
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(payload)
    server.join(10)
    listener.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a capture needs root (AF_PACKET)")
def test_a_capture_of_one_port_on_loopback_sees_that_port_and_nothing_else(
    tmp_path: Path,
) -> None:
    watched, other = free_port(), free_port()
    marker_file = tmp_path / "marker"
    marker_file.write_bytes(MARKER)
    out = tmp_path / "capture.json"
    argv = [sys.executable, "-m", "encbench.proof.wire", "--device", "lo"]
    argv += ["--marker-file", str(marker_file), "--out", str(out), "--port", str(watched)]
    capture = subprocess.Popen(argv)
    try:
        deadline = time.monotonic() + 20
        while not out.with_suffix(".ready").exists():
            assert time.monotonic() < deadline and capture.poll() is None
            time.sleep(0.05)
        # The other port carries the marker many times over, the watched one once.
        _send(other, MARKER * 50_000)
        _send(watched, b"x" * 1000 + MARKER + b"y" * 1000)
        time.sleep(0.3)
    finally:
        capture.send_signal(signal.SIGTERM)
        capture.wait(20)
    found = json.loads(out.read_text())
    assert found["marker_hits"] == 1
    # One conversation (keyed by whichever end reads as its service), never the other port's.
    assert len(found["bytes_by_port"]) == 1 and str(other) not in found["bytes_by_port"]
    assert found["payload_bytes"] == 2000 + len(MARKER)
    assert found["dropped"] == 0


def test_the_filter_for_a_port_is_tcpdumps_program_with_that_port() -> None:
    from encbench.proof.wire import port_filter

    # `tcpdump -dd 'tcp port 5432'` on an Ethernet device (jumps relative, as the kernel reads).
    program = port_filter(5432, skip_outgoing=False)
    assert len(program) == 20
    assert [i for i, (_, _, _, k) in enumerate(program) if k == 5432] == [5, 7, 15, 17]
    for index, (code, jt, jf, _) in enumerate(program):
        if code in (0x15, 0x45):
            assert index + 1 + max(jt, jf) < len(program)
    outgoing = port_filter(5432, skip_outgoing=True)
    assert outgoing[2:] == program
    assert 1 + 1 + outgoing[1][1] == len(outgoing) - 1  # an outgoing frame: the drop
