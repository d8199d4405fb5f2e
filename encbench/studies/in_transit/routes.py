"""How each variant of an in-transit cell reaches the one server: the hosts (one, or two
network namespaces joined by an emulated link), and per cell the routes — plain TCP, and TLS
or a tunnel (stunnel, ssh) — with the delay relay where the kernel has no netem.

In an A/A calibration the `encrypted` role takes a twin of the plain route: plain TCP from
the same host to the same address, no TLS and no tunnel."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from encbench.net import delay, netns, tunnels
from encbench.servers import pki
from encbench.servers.target import Connection
from encbench.studies.in_transit.records import TransitCell

USER = "encbench"


@dataclass
class Route:
    """How one variant of a cell reaches the server."""

    target: Connection
    ssl: bool
    prefix: list[str] = field(default_factory=list)  # the client's host (namespace)
    tunnel: tunnels.Tunnel | None = None


@dataclass
class Hosts:
    """Where clients run: `local` on the server's host, `remote` across the emulated link."""

    link: netns.Link | None
    local: list[str]
    remote: list[str]
    unavailable: str = ""  # why distances are not measured, when they are not


def open_hosts(
    stack: contextlib.ExitStack,
    cells: list[TransitCell],
    rate_mbit: float | None,
    log: Callable[[str], None],
) -> Hosts:
    """Two emulated hosts when a cell asks for a distance (torn down by `stack`); one host
    otherwise, or where namespaces cannot be made (then `unavailable` says why)."""
    if not any(c.rtt_ms > 0 for c in cells):
        return Hosts(None, [], [])
    for line in netns.clean_stale():
        log(line)
    try:
        link = stack.enter_context(netns.two_hosts(0.0, rate_mbit))
    except netns.NetnsUnavailable as exc:
        log(f"in-transit: {exc}")
        return Hosts(None, [], [], unavailable=str(exc))
    return Hosts(link, netns.exec_prefix(link.server_ns), netns.exec_prefix(link.client_ns))


@dataclass
class RouteMaker:
    """Opens a cell's two routes to the server at `port`."""

    run_dir: Path
    hosts: Hosts
    port: int
    database: str
    tls_version: str
    pki_for: Callable[[str], pki.Pki]
    record: dict[str, Any]  # the study's record: the delay method per distance goes there
    calibration: bool = False

    @contextlib.contextmanager
    def routes(self, cell: TransitCell) -> Iterator[dict[str, Route]]:
        hosts = self.hosts
        with contextlib.ExitStack() as stack:
            local = Connection.tcp("127.0.0.1", self.port, USER, self.database)
            plain = Route(local, ssl=False, prefix=hosts.local)
            if cell.rtt_ms > 0:
                assert hosts.link is not None
                upstream = (hosts.link.server_addr, self.port)
                method = netns.set_delay(hosts.link, cell.rtt_ms)
                self.record.setdefault("delay_method", {})[f"{cell.rtt_ms:g}"] = method
                if method == "relay":
                    relay = delay.relay(
                        self.run_dir, upstream=upstream, rtt_ms=cell.rtt_ms, prefix=hosts.remote
                    )
                    host, port = stack.enter_context(relay)
                else:
                    host, port = upstream
                far = Connection.tcp(host, port, USER, self.database)
                plain = Route(far, ssl=False, prefix=hosts.remote)
            if self.calibration:
                encrypted = Route(plain.target, ssl=False, prefix=plain.prefix)
            elif cell.method == "tls":
                encrypted = Route(plain.target, ssl=True, prefix=plain.prefix)
            else:
                tunnel = stack.enter_context(self._tunnel(cell))
                through = Connection.tcp("127.0.0.1", tunnel.port, USER, self.database)
                encrypted = Route(through, ssl=False, prefix=hosts.local, tunnel=tunnel)
            yield {"plain": plain, "encrypted": encrypted}

    def _tunnel(self, cell: TransitCell) -> contextlib.AbstractContextManager[tunnels.Tunnel]:
        db = ("127.0.0.1", self.port)
        local = self.hosts.local
        if cell.method == "stunnel":
            return tunnels.stunnel(
                self.run_dir,
                self.pki_for(cell.key_type),
                db=db,
                tls_version=self.tls_version,
                resume=cell.resume,
                server_prefix=local,
                client_prefix=local,
            )
        return tunnels.ssh_tunnel(
            self.run_dir,
            db=db,
            cipher=cell.cipher,
            key_type=cell.key_type,
            server_prefix=local,
            client_prefix=local,
        )
