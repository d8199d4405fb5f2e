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


CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from encbench.errors import Interrupted
    from encbench.net import netns

    def stop(signum, frame):
        raise Interrupted("stopped")

    signal.signal(signal.SIGTERM, stop)
    with netns.two_hosts(0) as link:
        print(link.id, flush=True)
        time.sleep(60)
    """
)


@needs_netns
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_run_leaves_nothing_and_a_killed_one_is_cleaned(
    state_dir: Path, sig: signal.Signals
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )
    assert child.stdout is not None
    link_id = child.stdout.readline().strip()
    assert leftovers(link_id)
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
