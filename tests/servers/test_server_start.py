"""The start-up wait MariaDB's and PostgreSQL's sandboxes share: a server that exits first
is named with its exit status and its log's tail; one that never answers, with the last
reason its probe gave."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from encbench.errors import ToolError
from encbench.servers.local import wait_ready


def test_a_server_that_exits_during_start_up_is_named_with_its_log() -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait()
    with pytest.raises(ToolError, match="db server exited during start-up") as failed:
        wait_ready(process, "db", lambda: "", 5, lambda: "the end of its log", Path("x.log"))
    assert failed.value.returncode == 3 and failed.value.tail == "the end of its log"


def test_a_server_that_never_answers_is_named_with_the_probes_last_reason() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    reasons = iter(["", "refused", ""])
    try:
        with pytest.raises(ToolError, match=r"not ready within 0 s \(refused\)"):
            wait_ready(process, "db", lambda: next(reasons, ""), 0.3, str, Path("x"), 0.05)
        answers = iter(["", "refused", None])
        wait_ready(process, "db", lambda: next(answers), 5, str, Path("x"), 0.01)
    finally:
        process.kill()
        process.wait()


def test_a_servers_port_is_outside_the_ephemeral_range_and_free() -> None:
    import socket

    from encbench.servers import local

    low = int(local.LOCAL_PORT_RANGE.read_text().split()[0])
    ports = {local.free_port() for _ in range(20)}
    assert all(local.SERVER_PORTS.start <= p < min(low, local.SERVER_PORTS.stop) for p in ports)
    assert len(ports) > 1  # drawn, not the same one each time
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports.pop()))
