"""Emulated distance for a study that measures a server over a network: the two hosts a
study puts its server and its clients on when a row asks for a round-trip time, and how a
client reaches the server across that link at a given distance (netem on the link, or a
delay relay in the client's namespace where the kernel has no netem: see netns.py).

The in-transit studies (MariaDB's and PostgreSQL's) share this: the server runs in the
server's namespace, loopback rows' clients beside it (so every row of a run shares one
topology), distance rows' clients in the client's namespace across the veth pair."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from encbench.net import delay, netns

# What a profile's rtt_ms key says of a value out of range (a pydantic validator's message).
RTT_RANGE = "round-trip time {rtt:g} ms is out of range; use 0 to {most:g} ms"


def rtts_in_range(value: list[float]) -> list[float]:
    """A profile's rtt_ms list, each from 0 (loopback) to netns.MAX_DELAY_MS; ValueError
    naming the first that is not."""
    for rtt in value:
        if not 0 <= rtt <= netns.MAX_DELAY_MS:
            raise ValueError(RTT_RANGE.format(rtt=rtt, most=netns.MAX_DELAY_MS))
    return value


@dataclass
class Hosts:
    """Where processes run: `local` on the server's host, `remote` across the emulated link
    (argv prefixes: netns.exec_prefix of each namespace; both empty without a link)."""

    link: netns.Link | None
    local: list[str]
    remote: list[str]
    unavailable: str = ""  # why distances are not measured, when they are not


def open_hosts(
    stack: contextlib.ExitStack,
    rtts: Iterable[float],
    rate_mbit: float | None,
    log: Callable[[str], None],
    study: str = "in-transit",
) -> Hosts:
    """Two emulated hosts when one of `rtts` is a distance (torn down by `stack`, and
    recorded so that `encbench clean` removes them after a killed run); one host otherwise,
    or where namespaces cannot be made (then `unavailable` says why).  What a killed run
    left is removed first."""
    if not any(rtt > 0 for rtt in rtts):
        return Hosts(None, [], [])
    for line in netns.clean_stale():
        log(line)
    try:
        link = stack.enter_context(netns.two_hosts(0.0, rate_mbit))
    except netns.NetnsUnavailable as exc:
        log(f"{study}: {exc}")
        return Hosts(None, [], [], unavailable=str(exc))
    return Hosts(link, netns.exec_prefix(link.server_ns), netns.exec_prefix(link.client_ns))


def reach_at(
    stack: contextlib.ExitStack, hosts: Hosts, run_dir: Path, rtt_ms: float
) -> tuple[str, Callable[[int], tuple[str, int]]]:
    """Set the link's delay to `rtt_ms`; returns the delay method ("netem" or "relay") and
    how the client host reaches a port of the server's host across the link: directly with
    netem, else through a delay relay of its own (one per port, started on first use and
    stopped with `stack`).  Raises netns.NetnsUnavailable when the delay cannot be set."""
    link = hosts.link
    assert link is not None, "a distance needs the two hosts (open_hosts)"
    method = netns.set_delay(link, rtt_ms)

    def reach(port: int) -> tuple[str, int]:
        upstream = (link.server_addr, port)
        if method != "relay":
            return upstream
        relay = delay.relay(run_dir, upstream=upstream, rtt_ms=rtt_ms, prefix=hosts.remote)
        return stack.enter_context(relay)

    return method, reach
