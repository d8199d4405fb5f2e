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

from encbench.net import distance, tunnels
from encbench.net.distance import Hosts, open_hosts
from encbench.servers import pki
from encbench.servers.target import Connection
from encbench.studies.in_transit.records import TransitCell

USER = "encbench"
# Where the hosts are made (net/distance.py); named here, where the study always found them.
__all__ = ["USER", "Hosts", "Route", "RouteMaker", "open_hosts"]


@dataclass
class Route:
    """How one variant of a cell reaches the server."""

    target: Connection
    ssl: bool
    prefix: list[str] = field(default_factory=list)  # the client's host (namespace)
    tunnel: tunnels.Tunnel | None = None


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
            reach: Callable[[int], tuple[str, int]] | None = None
            if cell.rtt_ms > 0:
                reach = self._distance(stack, cell.rtt_ms)
                far = Connection.tcp(*reach(self.port), USER, self.database)
                plain = Route(far, ssl=False, prefix=hosts.remote)
            if self.calibration:
                encrypted = Route(plain.target, ssl=False, prefix=plain.prefix)
            elif cell.method == "tls":
                encrypted = Route(plain.target, ssl=True, prefix=plain.prefix)
            else:
                # The tunnel's client end runs where the cell's clients do, its server end
                # beside the server; at a distance the link (and its delay) lies between them.
                tunnel = stack.enter_context(self._tunnel(cell, reach))
                through = Connection.tcp("127.0.0.1", tunnel.port, USER, self.database)
                encrypted = Route(through, ssl=False, prefix=plain.prefix, tunnel=tunnel)
            yield {"plain": plain, "encrypted": encrypted}

    def _distance(
        self, stack: contextlib.ExitStack, rtt_ms: float
    ) -> Callable[[int], tuple[str, int]]:
        """Set the link's delay; returns how the client host reaches a port of the server's
        host across it: directly with netem, else through a delay relay of its own (one per
        port, started on first use and stopped with the cell)."""
        method, reach = distance.reach_at(stack, self.hosts, self.run_dir, rtt_ms)
        self.record.setdefault("delay_method", {})[f"{rtt_ms:g}"] = method
        return reach

    def _tunnel(
        self, cell: TransitCell, reach: Callable[[int], tuple[str, int]] | None
    ) -> contextlib.AbstractContextManager[tunnels.Tunnel]:
        """The cell's tunnel: both ends on the server's host on loopback; at a distance
        (`reach`), its server end listens on the server's link address and its client end,
        on the client's host, dials it across the link."""
        db = ("127.0.0.1", self.port)
        hosts = self.hosts
        server_listen: tuple[str, int] | None = None
        dial: tuple[str, int] | None = None
        client_prefix = hosts.local
        if reach is not None:
            assert hosts.link is not None
            server_listen = (hosts.link.server_addr, tunnels.free_port())
            dial = reach(server_listen[1])
            client_prefix = hosts.remote
        if cell.method == "stunnel":
            return tunnels.stunnel(
                self.run_dir,
                self.pki_for(cell.key_type),
                db=db,
                server_listen=server_listen,
                client_dial=dial,
                tls_version=self.tls_version,
                resume=cell.resume,
                server_prefix=hosts.local,
                client_prefix=client_prefix,
            )
        return tunnels.ssh_tunnel(
            self.run_dir,
            db=db,
            cipher=cell.cipher,
            key_type=cell.key_type,
            sshd_listen=server_listen,
            client_dial=dial,
            server_prefix=hosts.local,
            client_prefix=client_prefix,
        )
