"""A daemon whose port was taken between free_port's choice and its bind is started again on a
fresh port (the tunnel test's race under parallel tests), and nothing else is retried."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from encbench.errors import ToolError
from encbench.net import tunnels

TAKEN = "print('bind [127.0.0.1]:1: Address already in use', flush=True); raise SystemExit(255)"
OTHER = "print('Permission denied (publickey)', flush=True); raise SystemExit(255)"


def listener(port: int) -> str:
    return (
        "import socket, time; s = socket.socket(); "
        f"s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)"
    )


Make = Callable[[], list[tunnels.Daemon]]


def maker(tmp_path: Path, scripts: list[str]) -> tuple[list[int], Make]:
    """daemons() for start_on_free_ports: one daemon per call, running the next script."""
    ports: list[int] = []

    def daemons() -> list[tunnels.Daemon]:
        port = tunnels.free_port()
        ports.append(port)
        script = scripts[min(len(ports), len(scripts)) - 1].format(port=port)
        argv = [sys.executable, "-c", script]
        return [tunnels.Daemon("fake", argv, tmp_path / "fake.log", port)]

    return ports, daemons


def test_a_taken_port_is_chosen_again_and_the_daemon_started_there(tmp_path: Path) -> None:
    ports, daemons = maker(tmp_path, [TAKEN, listener(0).replace("0)", "{port})")])
    with contextlib.ExitStack() as stack:
        (daemon,) = tunnels.start_on_free_ports(stack, daemons)
        assert len(ports) == 2 and daemon.port == ports[1]
        assert tunnels.listening(daemon.pid, daemon.port)
    assert daemon.process is None  # stopped with the stack


def test_a_port_taken_on_every_try_fails_after_the_last(tmp_path: Path) -> None:
    ports, daemons = maker(tmp_path, [TAKEN])
    with pytest.raises(tunnels.PortTaken), contextlib.ExitStack() as stack:
        tunnels.start_on_free_ports(stack, daemons, tries=2)
    assert len(ports) == 2


def test_any_other_start_up_failure_is_not_retried(tmp_path: Path) -> None:
    ports, daemons = maker(tmp_path, [OTHER])
    with pytest.raises(ToolError) as raised, contextlib.ExitStack() as stack:
        tunnels.start_on_free_ports(stack, daemons)
    assert not isinstance(raised.value, tunnels.PortTaken)
    assert len(ports) == 1


def test_an_earlier_attempts_log_does_not_make_a_later_failure_look_like_a_taken_port(
    tmp_path: Path,
) -> None:
    (tmp_path / "fake.log").write_text("Address already in use\n")  # a previous try's
    _, daemons = maker(tmp_path, [OTHER])
    with pytest.raises(ToolError) as raised, contextlib.ExitStack() as stack:
        tunnels.start_on_free_ports(stack, daemons)
    assert not isinstance(raised.value, tunnels.PortTaken)
