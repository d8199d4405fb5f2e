"""Two emulated hosts: created, used and removed, even when the run is interrupted or killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from encbench.net import netns

pytestmark = pytest.mark.integration


def usable() -> str | None:
    """Why namespaces cannot be tested here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    saved = os.environ.get("XDG_STATE_HOME")
    # Probed at collection time: keep its record out of the real user's state directory.
    with tempfile.TemporaryDirectory() as state:
        os.environ["XDG_STATE_HOME"] = state
        try:
            with netns.two_hosts(0):
                return None
        except netns.NetnsUnavailable as exc:
            return str(exc)
        finally:
            if saved is None:
                del os.environ["XDG_STATE_HOME"]
            else:
                os.environ["XDG_STATE_HOME"] = saved


REASON = usable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=f"{REASON}: loopback results only")


def leftovers(link_id: str) -> list[str]:
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    found = [ns for ns in netns.namespaces() if link_id in ns]
    return found + [line for line in links.splitlines() if f"encb{link_id}" in line]


@needs_netns
def test_two_hosts_reach_each_other_and_leave_no_namespace_or_veth(state_dir: Path) -> None:
    with netns.two_hosts(0) as link:
        assert {link.client_ns, link.server_ns} <= set(netns.namespaces())
        out = netns.run_in(link.client_ns, ["ip", "-br", "addr"], phase="test")
        assert f"{link.client_addr}/30" in out
        assert netns.recorded() == [link]
    assert leftovers(link.id) == []
    assert netns.recorded() == []


@needs_netns
def test_the_link_is_removed_when_the_body_fails(state_dir: Path) -> None:
    with pytest.raises(RuntimeError), netns.two_hosts(0) as link:
        raise RuntimeError("boom")
    assert leftovers(link.id) == []


@needs_netns
def test_a_delay_is_emulated_by_netem_or_left_to_the_relay(state_dir: Path) -> None:
    with netns.two_hosts(40) as link:
        qdisc = netns.run_in(link.client_ns, ["tc", "qdisc", "show"], phase="test")
        if link.delay_method == "netem":
            assert "delay 20ms" in qdisc
        else:
            assert link.delay_method == "relay" and "netem" not in qdisc


@needs_netns
def test_set_delay_changes_the_round_trip_and_keeps_the_rate_limit(state_dir: Path) -> None:
    with netns.two_hosts(0, rate_mbit=100) as link:
        method = netns.set_delay(link, 80)
        assert method in ("netem", "relay")
        qdisc = netns.run_in(link.client_ns, ["tc", "qdisc", "show"], phase="test")
        assert ("delay 40ms" in qdisc) if method == "netem" else ("tbf" in qdisc)
        assert netns.set_delay(link, 0) == "none"


LISTEN = textwrap.dedent(
    """
    import socket, sys
    with socket.create_server((sys.argv[1], 7777)) as server:
        print("listening", flush=True)
        conn, (addr, _) = server.accept()
        conn.sendall(addr.encode())
    """
)


def dial(link: netns.Link, from_ns: str, to_addr: str, to_ns: str) -> str:
    """The address the listener at to_addr saw from_ns dial it from."""
    listener = subprocess.Popen(
        [*netns.exec_prefix(to_ns), sys.executable, "-c", LISTEN, to_addr],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert listener.stdout is not None
        assert listener.stdout.readline().strip() == "listening"
        code = (
            "import socket, sys; s = socket.create_connection((sys.argv[1], 7777), timeout=5); "
            "print(s.recv(100).decode())"
        )
        out = netns.run_in(from_ns, [sys.executable, "-c", code, to_addr], phase="dial")
        return out.strip()
    finally:
        listener.kill()
        listener.wait()


@needs_netns
def test_three_hosts_share_a_switch_every_one_reaching_every_other(state_dir: Path) -> None:
    with netns.three_hosts(rate_mbit=500) as link:
        assert set(link.namespaces) <= set(netns.namespaces())
        assert len(link.namespaces) == 3
        hosts = {
            link.client_ns: link.client_addr,
            link.server_ns: link.server_addr,
            link.peer_ns: link.peer_addr,
        }
        for from_ns, from_addr in hosts.items():
            for to_ns, to_addr in hosts.items():
                if to_ns != from_ns:
                    assert dial(link, from_ns, to_addr, to_ns) == from_addr
        # Every direction is shaped where it leaves: both hosts' ends and the switch's ports.
        ends = {
            link.client_ns: ["c"],
            link.peer_ns: ["p"],
            link.server_ns: ["s", "q"],
        }
        for ns, devices in ends.items():
            for end in devices:
                show = ["tc", "qdisc", "show", "dev", f"encb{link.id}{end}"]
                qdisc = netns.run_in(ns, show, phase="test")
                assert "tbf" in qdisc and "500Mbit" in qdisc, (end, qdisc)
        assert f"{link.peer_addr}/29" in netns.run_in(
            link.peer_ns, ["ip", "-br", "addr"], phase="t"
        )
        assert netns.recorded() == [link]
    assert leftovers(link.id) == []
    assert netns.recorded() == []


CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from encbench.errors import Interrupted
    from encbench.net import netns

    def stop(signum, frame):
        raise Interrupted("stopped")

    signal.signal(signal.SIGTERM, stop)
    # Ctrl-C's KeyboardInterrupt even where SIGINT came in ignored (a job started in the
    # background by a shell without job control, pytest-xdist's workers).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with (netns.three_hosts() if sys.argv[1] == "3" else netns.two_hosts(0)) as link:
        print(link.id, flush=True)
        time.sleep(60)
    """
)


@needs_netns
@pytest.mark.parametrize(
    ("sig", "hosts"),
    [(signal.SIGTERM, 2), (signal.SIGINT, 2), (signal.SIGKILL, 2), (signal.SIGKILL, 3)],
)
def test_an_interrupted_run_leaves_nothing_and_a_killed_one_is_cleaned(
    state_dir: Path, sig: signal.Signals, hosts: int
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(hosts)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )
    assert child.stdout is not None
    link_id = child.stdout.readline().strip()
    assert len([ns for ns in netns.namespaces() if link_id in ns]) == hosts
    child.send_signal(sig)
    child.wait(timeout=30)
    if sig == signal.SIGKILL:
        # Nothing could run in the child: the record lets clean_stale find its link.
        assert leftovers(link_id)
        actions = netns.clean_stale()
        assert any(link_id in action for action in actions)
    assert leftovers(link_id) == []
    assert netns.recorded() == []


def test_clean_stale_spares_the_links_of_live_runs(state_dir: Path) -> None:
    live = netns.Link("abc123", "encb-abc123-c", "encb-abc123-s", "a", "b", 0, None, os.getpid())
    (netns.registry_dir() / "abc123.json").write_text(
        '{"id": "abc123", "client_ns": "encb-abc123-c", "server_ns": "encb-abc123-s", '
        f'"client_addr": "a", "server_addr": "b", "rtt_ms": 0, "rate_mbit": null, '
        f'"owner_pid": {os.getpid()}}}'
    )
    assert netns.clean_stale() == []
    assert netns.recorded() == [live]
