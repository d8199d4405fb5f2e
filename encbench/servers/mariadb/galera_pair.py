"""A Galera pair: two nodes, node 1 (the one a workload writes to) and node 2 (the replica),
each a sandbox, a GaleraCluster (galera_cluster.py) as the state-transfer study's cluster is —
but kept up for a whole study, with or without Galera's own TLS (socket.ssl_*) on every
connection between the two nodes.  The replication and rejoin studies measure on two of
them, a plain and a TLS one, up at once; as for every GaleraCluster, what uses it makes the
hosts (an emulated host per node: engine/galera_pair_study.py) and places a node on each.

Node 2 joins by a plain rsync SST while the database is still empty (`start`); what is then
written on node 1 — the studies' data, the marker table (`create_marker_table`) — reaches
node 2 by replication, over the link and under the pair's TLS if it has one.

A context manager: on success, error, Ctrl-C or SIGTERM both nodes are stopped (their SST
scripts with them) and their sandboxes deleted; after a SIGKILL `encbench clean` finds them
in the sandbox registry."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from encbench.errors import ServerError
from encbench.servers import pki
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.galera_cluster import (
    MARKER_TABLE,
    SYNC_POLL_S,
    GaleraCluster,
    hand_to_rsync,
    marker_notes,
    status_value,
    variable_value,
)
from encbench.servers.mariadb.sandbox import SandboxServer

VARIANTS = ("plain", "encrypted")
SYNC_TIMEOUT_S = 300.0
APPLY_TIMEOUT_S = 120.0


class GaleraPair(GaleraCluster[int]):
    """Node 1 and node 2 of one variant: `made` the run's PKI for a TLS pair, None for a
    plain one."""

    def __init__(
        self,
        variant: str,
        run_dir: Path,
        *,
        pool_mb: int,
        made: pki.Pki | None,
        log: Callable[[str], None],
    ) -> None:
        super().__init__(
            {n: run_dir / "sandbox" / f"galera-{variant}-node{n}" for n in (1, 2)},
            pool_mb=pool_mb,
            logs=run_dir / "logs" / "replication",
        )
        self.variant = variant
        self.pki = made  # None: a plain pair
        self.log = log

    @property
    def node1(self) -> SandboxServer:
        return self.nodes[1]

    @property
    def node2(self) -> SandboxServer:
        return self.nodes[2]

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
        self.log(f"starting the {self.variant} cluster")
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
        self.start_synced(2, self.member_options(2), SYNC_TIMEOUT_S)

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
        for note in marker_notes(marker, rows):
            self.node1.query(f"INSERT INTO {table} (note) VALUES (%s)", (note,))

    def marker_rows(self, n: int, marker: str) -> int:
        table = f"{self.nodes[n].database}.{MARKER_TABLE}"
        rows = self.nodes[n].query(
            f"SELECT COUNT(*) FROM {table} WHERE note LIKE %s", (f"%{marker}",)
        )
        return int(rows[0][0])
