"""A Galera pair: two nodes, each a sandbox on its own emulated host (node 1 in one network
namespace, node 2 in the other, joined by a veth pair of their own), a GaleraCluster
(galera_cluster.py) as the state-transfer study's cluster is — but kept up for a whole study,
with or without Galera's own TLS (socket.ssl_*) on every connection between the two nodes.
The replication and rejoin studies measure on two of them, a plain and a TLS one, up at once.

Node 2 joins by a plain rsync SST while the database is still empty (`start`); what is then
written on node 1 — the studies' data, the marker table (`create_marker_table`) — reaches
node 2 by replication, over the link and under the pair's TLS if it has one.

A context manager: on success, error, Ctrl-C or SIGTERM both nodes are stopped (their SST
scripts with them), their sandboxes deleted and the namespaces removed; after a SIGKILL
`encbench clean` finds them in the sandbox and link registries."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.errors import BadInput, ServerError
from encbench.net import netns
from encbench.servers import galera, pki
from encbench.servers.galera_cluster import (
    SYNC_POLL_S,
    GaleraCluster,
    hand_to_rsync,
    status_value,
    variable_value,
)
from encbench.servers.sandbox import SandboxServer

VARIANTS = ("plain", "encrypted")
MARKER_TABLE = "encbench_marker"
SYNC_TIMEOUT_S = 300.0
APPLY_TIMEOUT_S = 120.0


class GaleraPair(GaleraCluster[int]):
    """Node 1 (the one a workload writes to) and node 2 (the replica), for one variant:
    `made` the run's PKI for a TLS pair, None for a plain one; `rate_mbit` the link's rate
    limit (None: as fast as the veth goes)."""

    def __init__(
        self,
        variant: str,
        run_dir: Path,
        *,
        pool_mb: int,
        rate_mbit: float | None,
        made: pki.Pki | None,
        log: Callable[[str], None],
    ) -> None:
        super().__init__(
            {n: run_dir / "sandbox" / f"galera-{variant}-node{n}" for n in (1, 2)},
            pool_mb=pool_mb,
            logs=run_dir / "logs" / "replication",
        )
        self.variant = variant
        self.rate_mbit = rate_mbit
        self.pki = made  # None: a plain pair
        self.log = log
        self.link: netns.Link | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> GaleraPair:
        try:
            try:
                self.link = self.stack.enter_context(netns.two_hosts(0.0, self.rate_mbit))
            except netns.NetnsUnavailable as exc:
                raise BadInput(f"replication: {exc}; run as root") from exc
            link = self.link
            hosts = {1: (link.server_addr, link.server_ns), 2: (link.client_addr, link.client_ns)}
            for n, (address, namespace) in hosts.items():
                self.place(
                    n,
                    name=f"repl-{self.variant}-{n}",
                    node_name=f"{self.variant}-node{n}",
                    address=address,
                    launch=netns.exec_prefix(namespace),
                )
        except BaseException:
            self.stack.close()
            raise
        return self

    @property
    def node1(self) -> SandboxServer:
        return self.nodes[1]

    @property
    def node2(self) -> SandboxServer:
        return self.nodes[2]

    @property
    def node2_ns(self) -> str:
        assert self.link is not None
        return self.link.client_ns

    @property
    def node2_device(self) -> str:
        assert self.link is not None
        return netns.client_device(self.link)

    def link_bytes(self) -> int:
        """Both directions of node 2's end of the link: everything between the two nodes."""
        now = netns.link_counters(self.node2_ns, self.node2_device)
        return now.rx_bytes + now.tx_bytes

    def ssl_options(self) -> tuple[str, ...]:
        if self.pki is None:
            return galera.ssl_provider_options(key=None, cert=None, ca=None)
        # Each node both listens and dials: the certificate serves as either end.
        return galera.ssl_provider_options(
            key=self.pki.server_key.absolute(),
            cert=self.pki.server_cert.absolute(),
            ca=self.pki.ca_cert.absolute(),
        )

    def member_options(self, n: int) -> dict[str, str]:
        return self.node_options(
            n,
            peers=() if n == 1 else (self.hosts[1],),
            sst_method="rsync",
            provider_extra=self.ssl_options(),
        )

    # -- provisioning -----------------------------------------------------------------------
    def start(self) -> None:
        """Node 1 bootstraps, with the database created; node 2 joins it (a plain rsync SST
        of that still empty database)."""
        node1, node2 = self.node1, self.node2
        self.log(f"replication: starting the {self.variant} cluster")
        node1.initialize(self.server_options(1))
        # [sst] for the join: plain, and no certificate for the scripts to find.
        sst = {"sst": {"ssl-mode": "DISABLED", "sst-log-archive": "0", "progress": "none"}}
        node1.set_sections(sst)
        node1.start(self.member_options(1))
        self.wait_state(node1, galera.SYNCED, SYNC_TIMEOUT_S)
        node1.query(f"CREATE DATABASE IF NOT EXISTS {node1.database}")
        node2.initialize(self.member_options(2), install_db=False)
        node2.set_sections(sst)
        self.stop_node2(empty=True)  # not running yet: hands its empty directory to rsync
        self.start_node2()

    def create_marker_table(self) -> None:
        """On node 1, the table marker rows go into (write_marker): a known plaintext, for
        the proofs on the wire."""
        node1 = self.node1
        node1.query(
            f"CREATE TABLE {node1.database}.{MARKER_TABLE} "
            "(id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE=InnoDB"
        )

    def describe(self) -> dict[str, Any]:
        assert self.link is not None
        return {
            "nodes": {
                str(n): {"address": self.hosts[n].address, "namespace": ns}
                for n, ns in ((1, self.link.server_ns), (2, self.link.client_ns))
            },
            "socket_ssl": self.pki is not None,
            "buffer_pool_mb": self.pool_mb,
        }

    # -- during a run -------------------------------------------------------------------------
    def wait_applied(self, timeout_s: float = APPLY_TIMEOUT_S) -> float:
        """Wait until node 2 has committed every write set node 1 has; returns the wait."""
        began = time.monotonic()
        want = int(status_value(self.node1, "wsrep_last_committed") or 0)
        while int(status_value(self.node2, "wsrep_last_committed") or 0) < want:
            if time.monotonic() - began > timeout_s:
                raise ServerError(
                    f"the {self.variant} cluster's node 2 did not apply node 1's write sets "
                    f"within {timeout_s:.0f} s",
                    hint=f"its error log: {self.node2.paths.error_log}",
                )
            time.sleep(SYNC_POLL_S)
        return time.monotonic() - began

    def cpu_seconds(self) -> float:
        """Both nodes' CPU so far (their cgroups)."""
        return self.node1.cpu_seconds() + self.node2.cpu_seconds()

    def node_ssl(self, n: int) -> str:
        return galera.provider_ssl(variable_value(self.nodes[n], "wsrep_provider_options"))

    def cluster_size(self) -> int:
        size = status_value(self.node1, "wsrep_cluster_size")
        return int(size) if size.isdigit() else 0

    def stop_node2(self, *, empty: bool = False) -> None:
        """Node 2 stopped; with `empty`, its data directory emptied too (grastate with it),
        so that its next start needs a full SST."""
        if not empty:
            self.node2.stop()
            return
        self.empty(2)
        hand_to_rsync(self.node2)

    def start_node2(self) -> None:
        """Node 2 started and waited for until Synced (whatever state transfer it needs)."""
        node2 = self.node2
        node2.start(self.member_options(2), timeout_s=SYNC_TIMEOUT_S, poll_s=SYNC_POLL_S)
        self.wait_state(node2, galera.SYNCED, SYNC_TIMEOUT_S)

    def rejoin(self) -> float:
        """Node 2 stopped and started again with its data (grastate kept): it rejoins by IST
        or, with nothing missed, by none, and opens new connections to node 1 — each with a
        TLS handshake in the TLS pair.  Returns the seconds from its start to Synced."""
        self.stop_node2()
        began = time.monotonic()
        self.start_node2()
        return time.monotonic() - began

    def write_marker(self, marker: str, rows: int) -> None:
        table = f"{self.node1.database}.{MARKER_TABLE}"
        for i in range(rows):
            # The same marker at different offsets: one split by a frame is not every one.
            self.node1.query(
                f"INSERT INTO {table} (note) VALUES (%s)", (f"{'x' * 17 * i}{marker}",)
            )

    def marker_rows(self, n: int, marker: str) -> int:
        table = f"{self.nodes[n].database}.{MARKER_TABLE}"
        rows = self.nodes[n].query(
            f"SELECT COUNT(*) FROM {table} WHERE note LIKE %s", (f"%{marker}",)
        )
        return int(rows[0][0])
