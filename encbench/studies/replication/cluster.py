"""One of the replication study's clusters: two Galera nodes, each a sandbox on its own
emulated host (node 1 in one network namespace, node 2 in the other, joined by a veth pair
of their own), a servers/galera_cluster.py as the state-transfer study's cluster is — but
kept up for the whole study, with or without Galera's own TLS (socket.ssl_*) on every
connection between the two nodes.

Node 2 joins by a plain rsync SST while the database is still empty; the sysbench tables and
the marker table are then created on node 1 and reach node 2 by replication, over the link
and under the cluster's TLS if it has one.

A context manager: on success, error, Ctrl-C or SIGTERM both nodes are stopped (their SST
scripts with them), their sandboxes deleted and the namespaces removed; after a SIGKILL
`encbench clean` finds them in the sandbox and link registries."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from encbench.errors import BadInput, ServerError
from encbench.net import netns
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.servers import galera, pki
from encbench.servers.galera_cluster import (
    SYNC_POLL_S,
    GaleraCluster,
    hand_to_rsync,
    status_value,
    variable_value,
)
from encbench.servers.sandbox import SandboxServer, tree_bytes
from encbench.servers.sandbox_dirs import remove_empty_sandbox_dir
from encbench.servers.sizing import BYTES_PER_ROW_ESTIMATE
from encbench.studies.replication.options import replication_options
from encbench.workloads import sysbench

VARIANTS = ("plain", "encrypted")
MARKER_TABLE = "encbench_marker"
SYNC_TIMEOUT_S = 300.0
APPLY_TIMEOUT_S = 120.0


def buffer_pool_mb(profile: Profile) -> int:
    """The whole data set in the pool with room to spare: the paired TPS is to measure the
    replication, not the disk (every node holds the data; see sizing.py)."""
    rows = profile.data.tables * profile.data.table_size
    return max(64, min(2048, int(rows * BYTES_PER_ROW_ESTIMATE * 1.5 / 2**20) + 32))


class Cluster(GaleraCluster[int]):
    """Node 1 (the one sysbench writes to) and node 2 (the replica), for one variant."""

    def __init__(
        self,
        variant: str,
        run_dir: Path,
        profile: Profile,
        made: pki.Pki | None,
        log: Callable[[str], None],
    ) -> None:
        super().__init__(
            {n: run_dir / "sandbox" / f"galera-{variant}-node{n}" for n in (1, 2)},
            pool_mb=buffer_pool_mb(profile),
            logs=run_dir / "logs" / "replication",
        )
        self.variant = variant
        self.profile = profile
        self.pki = made  # None: a plain cluster
        self.log = log
        self.link: netns.Link | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> Cluster:
        try:
            try:
                spec = replication_options(self.profile)
                self.link = self.stack.enter_context(netns.two_hosts(0.0, spec.rate_mbit))
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
    def provision(self, prepare_log: Path) -> None:
        """Node 1 bootstraps, node 2 joins it (a plain rsync SST of an empty database), then
        the data is loaded on node 1 and replicated."""
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
        data = self.profile.data
        rows = data.tables * data.table_size
        self.log(f"replication: loading {data.tables} × {data.table_size:,} rows ({self.variant})")
        sysbench.prepare(
            node1.endpoint(),
            tables=data.tables,
            table_size=data.table_size,
            log=prepare_log,
            timeout_s=max(600, rows / 1000),
        )
        node1.query(
            f"CREATE TABLE {node1.database}.{MARKER_TABLE} "
            "(id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE=InnoDB"
        )
        self.wait_applied()

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
        TLS handshake in the TLS cluster.  Returns the seconds from its start to Synced."""
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


@contextmanager
def both_clusters(
    store: ResultStore, profile: Profile, log: Callable[[str], None], study: str
) -> Iterator[dict[str, Cluster]]:
    """The plain and the TLS cluster, started, loaded and described in the study's record
    (`study`.json); both torn down on any exit.  Two clusters rather than one restarted per
    variant: see study.py."""
    for line in netns.clean_stale():  # what a killed run left: never a live run's
        log(f"{study}: {line}")
    with ExitStack() as stack:
        # Last out: DIR/sandbox once both clusters' sandboxes are gone.
        stack.callback(remove_empty_sandbox_dir, store)
        made = pki.generate(store.path, replication_options(profile).key_type, peer=True)
        clusters = {
            variant: stack.enter_context(
                Cluster(variant, store.path, profile, made if variant == "encrypted" else None, log)
            )
            for variant in VARIANTS
        }
        for variant, cluster in clusters.items():
            cluster.provision(store.path / "logs" / f"{study}-prepare-{variant}.log")
        record = store.read_json(f"{study}.json") or {}
        record.update(describe(clusters, profile, made))
        store.write_json(f"{study}.json", record)
        yield clusters


def describe(clusters: dict[str, Cluster], profile: Profile, made: pki.Pki) -> dict[str, Any]:
    node1 = clusters["plain"].node1
    data = profile.data
    return {
        "clusters": {v: c.describe() for v, c in clusters.items()},
        "link": {
            "rate_mbit": replication_options(profile).rate_mbit,
            "method": "veth pair per cluster",
        },
        "data": {
            "tables": data.tables,
            "table_size": data.table_size,
            "database_bytes": tree_bytes(node1.paths.datadir / node1.database),
        },
        "mariadb_version": node1.version(),
        "galera_version": status_value(node1, "wsrep_provider_version"),
        "key_type": replication_options(profile).key_type,
        "certificate": pki.describe(made.server_cert),
    }
