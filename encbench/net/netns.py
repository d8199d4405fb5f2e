"""Two emulated hosts on one machine: network namespaces `encb-<id>-c` (client) and
`encb-<id>-s` (server) joined by a veth pair on a /30 of 10.213.0.0/16, with a round-trip
delay and an optional rate limit.  Or three (`three_hosts`): a third host `encb-<id>-p` (the
peer) on a /29, where the server's namespace holds a bridge — the switch — with the server's
address, and both other hosts' veth pairs end on its ports, so every host reaches every
other in one hop, each through its own rate-limited pair.

How the delay is done is recorded in `Link.delay_method`:

* "netem": netem on both veth ends, half the round-trip time each, so a request and its answer
  each pay one half; clients dial the server directly.
* "relay": the kernel has no netem (tc says the qdisc kind is unknown), so nothing on the link
  delays; the caller must dial through `delay.relay(run_dir, upstream=(link.server_addr, port),
  rtt_ms=link.rtt_ms, prefix=exec_prefix(link.client_ns))`, a userspace relay in the client
  namespace that delays each direction and the TCP handshake (see delay.py).  A client that
  dials the server directly on such a link sees no delay at all.
* "none": the round-trip time is 0.

A rate limit is netem's own rate option with netem, otherwise tbf (kernels without netem
usually still have it).

Every link is recorded under $XDG_STATE_HOME/encbench/netns/ with the identity of the run that
made it (pid and start time: see proc.RunIdentity), so that `clean_stale()` can remove what a
killed run left, and only that, even once its pid is recycled.  Where the
machine forbids namespaces (not root, no CAP_NET_ADMIN, a kernel without veth or tbf),
`NetnsUnavailable` says so; the caller can then report loopback results only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from encbench import proc, state
from encbench.errors import BadInput, EncbenchError, ToolError

PREFIX = "encb-"
MAX_DELAY_MS = 10_000.0
IP_HINT = "needs root and iproute2 (apt-get install iproute2)"
UNKNOWN_QDISC = "qdisc kind is unknown"


class NetnsUnavailable(EncbenchError):
    """Namespaces or delay emulation are not possible here; measure on loopback only."""


@dataclass(frozen=True)
class Link:
    id: str
    client_ns: str
    server_ns: str
    client_addr: str
    server_addr: str
    rtt_ms: float
    rate_mbit: float | None
    owner_pid: int
    delay_method: str = "none"  # "none", "netem" or "relay": see the module docstring
    # None in records written before start times were: only the pid can be checked then.
    owner_start_ticks: int | None = None
    run_id: str = ""
    # A third host (three_hosts), bridged to the other two in the server's namespace; ""
    # on a two-host link.
    peer_ns: str = ""
    peer_addr: str = ""

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(ns for ns in (self.client_ns, self.server_ns, self.peer_ns) if ns)

    @property
    def prefix_len(self) -> int:
        return 29 if self.peer_ns else 30

    @property
    def owner(self) -> proc.RunIdentity:
        return proc.RunIdentity(self.run_id, self.owner_pid, self.owner_start_ticks)


def check_delay(rtt_ms: float) -> float:
    if not 0 <= rtt_ms <= MAX_DELAY_MS:
        raise BadInput(
            f"round-trip time {rtt_ms} ms is out of range: use 0 to {MAX_DELAY_MS:.0f} ms"
        )
    return rtt_ms


def check_rate(rate_mbit: float | None) -> float | None:
    if rate_mbit is not None and not 0 < rate_mbit <= 100_000:
        raise BadInput(f"rate limit {rate_mbit} Mbit/s is out of range: use 0 < rate ≤ 100000")
    return rate_mbit


def exec_prefix(ns: str) -> list[str]:
    """Prefix for argv to run a program inside a namespace; `ip netns exec` execs the program
    itself, so the pid a caller gets from Popen is the program's."""
    return [_ip(), "netns", "exec", ns]


def net_prefix(ns: str) -> list[str]:
    """Like exec_prefix, but joining only the network namespace (nsenter, which also execs
    the program): `ip netns exec` makes a mount namespace for each program it starts, whose
    teardown is the kernel's work outside that program — a cost for a run that starts
    hundreds (the rsync-per-file pipeline).  `ip netns add` keeps the namespace here."""
    return ["nsenter", f"--net=/run/netns/{ns}"]


def run_in(ns: str, argv: Sequence[str], *, phase: str, timeout_s: float = 30) -> str:
    return proc.run([*exec_prefix(ns), *argv], phase=phase, timeout_s=timeout_s).stdout


def _ip() -> str:
    found = proc.which("ip")
    if found is None:
        raise NetnsUnavailable(f"`ip` not found: {IP_HINT}")
    return found


def _ipcmd(*args: str, phase: str) -> None:
    proc.run([_ip(), *args], phase=phase, timeout_s=30)


def namespaces() -> list[str]:
    out = proc.run([_ip(), "netns", "list"], phase="ip netns list", timeout_s=30).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


# -- registry ---------------------------------------------------------------------------------
def registry_dir() -> Path:
    return state.folder("netns")


def _record(link: Link) -> Path:
    return registry_dir() / f"{link.id}.json"


def recorded() -> list[Link]:
    def link(data: dict[str, Any]) -> Link:
        # Records from before delay_method existed: a delay was then always netem.
        data.setdefault("delay_method", "netem" if data.get("rtt_ms") else "none")
        return Link(**data)

    return state.read_records("netns", link)


def clean_stale(only: proc.RunIdentity | None = None) -> list[str]:
    """Remove the namespaces of recorded links whose run is dead (or exactly those of the run
    `only`); one line per action."""
    actions = []
    for link in recorded():
        if not proc.to_clean(link.owner, False, only):
            continue
        actions += _remove(link)
        if _forget(link):
            actions.append(f"forgot link {link.id} of dead {link.owner}")
        else:
            actions.append(f"kept the record of link {link.id}: its namespaces are still there")
    return actions


def _forget(link: Link) -> bool:
    """Delete the link's record once neither namespace is left; a record outlives a failed
    removal so that the next run's (or `encbench clean`'s) clean_stale tries again."""
    if set(link.namespaces) & set(namespaces()):
        return False
    _record(link).unlink(missing_ok=True)
    return True


# -- the link ---------------------------------------------------------------------------------
def _new_link(rtt_ms: float, rate_mbit: float | None, hosts: int = 2) -> Link:
    link_id = secrets.token_hex(3)
    owner = proc.current_run()
    # A /30 holds two hosts, a /29 three (and the switch needs no address of its own).
    block = 4 if hosts == 2 else 8
    third, fourth = secrets.randbelow(256), block * secrets.randbelow(256 // block)
    peer = hosts == 3
    return Link(
        id=link_id,
        client_ns=f"{PREFIX}{link_id}-c",
        server_ns=f"{PREFIX}{link_id}-s",
        client_addr=f"10.213.{third}.{fourth + 1}",
        server_addr=f"10.213.{third}.{fourth + 2}",
        rtt_ms=rtt_ms,
        rate_mbit=rate_mbit,
        owner_pid=owner.pid,
        owner_start_ticks=owner.start_ticks,
        run_id=owner.run_id,
        peer_ns=f"{PREFIX}{link_id}-p" if peer else "",
        peer_addr=f"10.213.{third}.{fourth + 3}" if peer else "",
    )


def _tc(ns: str, dev: str, qdisc: list[str]) -> None:
    run_in(ns, ["tc", "qdisc", "add", "dev", dev, "root", *qdisc], phase="tc qdisc add")


def _unavailable(qdisc: list[str], exc: ToolError) -> NetnsUnavailable:
    return NetnsUnavailable(
        f"cannot emulate the link ({qdisc[0]}): {exc.tail.strip() or exc}; loopback results only"
    )


def _devices(link: Link) -> tuple[tuple[str, str], tuple[str, str]]:
    return (link.client_ns, f"encb{link.id}c"), (link.server_ns, f"encb{link.id}s")


def set_delay(link: Link, rtt_ms: float) -> str:
    """Change the link's round-trip time for the next measurements; returns the method that
    now provides it ("netem", or "relay" when the kernel has none: the caller then dials
    through delay.relay).  The old root qdisc is replaced, rate limit included."""
    check_delay(rtt_ms)
    assert not link.peer_ns, "a three-host link has no delay (three_hosts)"
    methods = []
    for ns, dev in _devices(link):
        with contextlib.suppress(ToolError):
            run_in(ns, ["tc", "qdisc", "del", "dev", dev, "root"], phase="tc qdisc del")
        methods.append(_shape(ns, dev, rtt_ms, link.rate_mbit))
    return methods[0] if rtt_ms > 0 else "none"


def _shape(ns: str, dev: str, rtt_ms: float, rate_mbit: float | None) -> str:
    """Shape one end; returns the delay method.  netem is tried rather than looked up: the
    kernel config is not always readable and a module may load on first use.  Without netem
    the delay is left to the relay and tbf alone limits the rate."""
    if rtt_ms > 0:
        qdisc = ["netem", "delay", f"{rtt_ms / 2:.3f}ms", "limit", "100000"]
        if rate_mbit is not None:
            qdisc += ["rate", f"{rate_mbit}mbit"]
        try:
            _tc(ns, dev, qdisc)
            return "netem"
        except ToolError as exc:
            if UNKNOWN_QDISC not in exc.tail:
                raise _unavailable(qdisc, exc) from exc
    if rate_mbit is not None:
        qdisc = ["tbf", "rate", f"{rate_mbit}mbit", "burst", "256kbit", "latency", "1s"]
        try:
            _tc(ns, dev, qdisc)
        except ToolError as exc:
            raise _unavailable(qdisc, exc) from exc
    return "relay" if rtt_ms > 0 else "none"


def _create(link: Link) -> Link:
    """Build the link; returns it with the delay method its client end got."""
    for ns in link.namespaces:
        _ipcmd("netns", "add", ns, phase="ip netns add")
        _ipcmd("-n", ns, "link", "set", "lo", "up", phase="ip link up lo")
    # Veth pairs as (end, end), each end (namespace, device, address); an end without an
    # address is a port of the switch.
    client = (link.client_ns, f"encb{link.id}c", link.client_addr)
    pairs = [(client, (link.server_ns, f"encb{link.id}s", link.server_addr))]
    if link.peer_ns:
        # The server's address moves to the switch, and the peer's pair ends on a port too.
        switch = f"encb{link.id}b"
        _ipcmd(
            "-n",
            link.server_ns,
            "link",
            "add",
            switch,
            "type",
            "bridge",
            phase="ip link add bridge",
        )
        _address(link.server_ns, switch, link.server_addr, link.prefix_len)
        _ipcmd("-n", link.server_ns, "link", "set", switch, "up", phase="ip link up")
        pairs = [
            (client, (link.server_ns, f"encb{link.id}s", "")),
            (
                (link.peer_ns, f"encb{link.id}p", link.peer_addr),
                (link.server_ns, f"encb{link.id}q", ""),
            ),
        ]
    methods = []
    for pair in pairs:
        (_, first, _), (_, second, _) = pair
        _ipcmd("link", "add", first, "type", "veth", "peer", "name", second, phase="veth")
        for ns, dev, addr in pair:
            _ipcmd("link", "set", dev, "netns", ns, phase="ip link set netns")
            if addr:
                _address(ns, dev, addr, link.prefix_len)
            else:
                _ipcmd(
                    "-n",
                    ns,
                    "link",
                    "set",
                    dev,
                    "master",
                    f"encb{link.id}b",
                    phase="ip link master",
                )
            _ipcmd("-n", ns, "link", "set", dev, "up", phase="ip link up")
            # Each direction is shaped where it leaves: a host's end, or the switch's port.
            methods.append(_shape(ns, dev, link.rtt_ms, link.rate_mbit))
    return replace(link, delay_method=methods[0])


def _address(ns: str, dev: str, addr: str, prefix_len: int) -> None:
    _ipcmd("-n", ns, "addr", "add", f"{addr}/{prefix_len}", "dev", dev, phase="ip addr add")


def _remove(link: Link) -> list[str]:
    """Delete every namespace of the link; deleting a namespace destroys the veth ends and the
    switch inside it, and a veth pair dies with either end, so nothing else is left.  Never
    raises."""
    actions = []
    present = set(namespaces())
    for ns in link.namespaces:
        if ns in present and ns.startswith(PREFIX):
            with contextlib.suppress(ToolError):
                _ipcmd("netns", "del", ns, phase="ip netns del")
                actions.append(f"removed namespace {ns}")
    # A veth created before it was moved into a namespace lives in ours; remove it too.
    for first_end in ("c", "p") if link.peer_ns else ("c",):
        with contextlib.suppress(ToolError):
            proc.run(
                [_ip(), "link", "del", f"encb{link.id}{first_end}"],
                phase="ip link del",
                timeout_s=30,
                check=False,
            )
    return actions


@contextlib.contextmanager
def two_hosts(rtt_ms: float = 0.0, rate_mbit: float | None = None) -> Iterator[Link]:
    """Create the link, yield it, and remove it on success, error, KeyboardInterrupt or the
    Interrupted that the CLI raises on SIGTERM.  With link.delay_method == "relay" clients
    must dial through delay.relay (see the module docstring)."""
    with _hosts(rtt_ms, rate_mbit, 2) as link:
        yield link


@contextlib.contextmanager
def three_hosts(rate_mbit: float | None = None) -> Iterator[Link]:
    """Like two_hosts, with a third host (link.peer_ns, link.peer_addr) on the same switch.
    No delay: set_delay and the relay know two ends only."""
    with _hosts(0.0, rate_mbit, 3) as link:
        yield link


@contextlib.contextmanager
def _hosts(rtt_ms: float, rate_mbit: float | None, count: int) -> Iterator[Link]:
    check_delay(rtt_ms)
    check_rate(rate_mbit)
    if os.geteuid() != 0:
        raise NetnsUnavailable(f"network namespaces {IP_HINT}; loopback results only")
    link = _new_link(rtt_ms, rate_mbit, count)
    # Recorded before creation: a run killed half-way still leaves a record to clean.
    _record(link).write_text(json.dumps(asdict(link)))
    try:
        try:
            link = _create(link)
        except ToolError as exc:
            raise NetnsUnavailable(
                f"cannot create network namespaces here ({exc}); loopback results only"
            ) from exc
        _record(link).write_text(json.dumps(asdict(link)))
        yield link
    finally:
        _remove(link)
        with contextlib.suppress(ToolError, NetnsUnavailable):
            _forget(link)


# -- what crossed a link ------------------------------------------------------------------------
@dataclass(frozen=True)
class Counters:
    rx_bytes: int
    tx_bytes: int


def link_counters(ns: str, device: str) -> Counters:
    """The device's own byte counters (read inside its namespace, where /sys shows it)."""
    out = proc.run(
        [exec_prefix(ns)[0], "-n", ns, "-s", "-j", "link", "show", "dev", device],
        phase="read link counters",
        timeout_s=30,
    ).stdout
    stats = json.loads(out)[0]["stats64"]
    return Counters(int(stats["rx"]["bytes"]), int(stats["tx"]["bytes"]))


def client_device(link: Link) -> str:
    """The veth end in the client namespace (named by _create)."""
    return f"encb{link.id}c"
