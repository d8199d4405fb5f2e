"""What the replication and rejoin studies share, below both (no study imports another): the
two Galera pairs they measure on (servers/mariadb/galera_pair.py) — a plain one and one with
Galera's
own TLS, up at once, each node on its own emulated host (node 1 in one network namespace,
node 2 in the other, joined by a veth pair of their own) — as the profile sets them,
started, loaded with the profile's sysbench data and described in the study's record; what
those pairs need of this machine; the words for them in a plan and a plot; the study class
both build on (GaleraPairStudy: both pairs up for the run, each cell proven on both links
before it is measured); and what a per-cell proof reads of a capture of node 2's link.

The pairs are set in the replication study's section (`[replication]`: `key_type`,
`rate_mbit`), which the rejoin study reads too: both measure on the same clusters."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from encbench.engine.machine_needs import Here, RootNeed
from encbench.engine.study_base import Given, StudyBasics
from encbench.errors import BadInput, ProofError
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.net import netns
from encbench.profiles.options import Rounds
from encbench.profiles.profile import Profile
from encbench.proof import link_capture
from encbench.results.store import ResultStore
from encbench.servers import pki
from encbench.servers.local import tree_bytes
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.galera_cluster import status_value
from encbench.servers.mariadb.galera_pair import VARIANTS, GaleraPair
from encbench.servers.sandbox_dirs import remove_empty_sandbox_dir
from encbench.servers.sizing import SERVER_ALLOWANCE_MB, data_dir_bytes, rows_mb
from encbench.workloads import sysbench

# The section that sets the pairs: the replication study's.
PAIRS_SECTION = "replication"
NODES = 4  # two clusters, up at once, of two nodes each
MARKER_ROWS = 4  # written on node 1 in a per-cell proof; node 2 must hold every one
# The variants as a plan names them, and as the plots do.
VARIANT_WORDS = ("plain cluster", "socket.ssl cluster")
# Both clusters are plain servers; only Galera's own traffic differs.
CLUSTERS = {"plain": "plain cluster", "encrypted": "socket.ssl (TLS) cluster"}
CREATES = (
    "2 Galera clusters of 2 MariaDB nodes (servers and data directories under the results "
    "directory), a network namespace per node joined by veth pairs, TLS keys and certificates"
)


class PairsSpec(Rounds):
    """The pairs' settings, in the replication study's section (ReplicationSpec adds its
    own): the TLS pair's key type, and the link between each pair's hosts."""

    key_type: Literal["rsa2048", "rsa3072", "rsa4096"] = "rsa2048"
    # The emulated link between each cluster's hosts (tbf); none: as fast as the veth goes.
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None


def pairs_options(profile: Profile) -> PairsSpec:
    return profile.section(PAIRS_SECTION, PairsSpec)


# -- what they need of this machine ---------------------------------------------------------------
def needs(profile: Profile) -> list[Check]:
    """The Galera provider, rsync for node 2's first join, `ip` and root for the hosts."""
    return [
        galera.provider_check(),
        checks.binary("ip", "iproute2"),
        checks.binary("wsrep_sst_common", "mariadb-server"),
        checks.binary("rsync", "rsync"),
        checks.root("the replication study's clusters live in network namespaces"),
    ]


def buffer_pool_mb(profile: Profile) -> int:
    """The whole data set in the pool with room to spare: the paired TPS is to measure the
    replication, not the disk (every node holds the data)."""
    return max(64, min(2048, int(rows_mb(profile.data.rows) * 1.5) + 32))


def disk_bytes(profile: Profile) -> int:
    """Every node's own copy of the data."""
    return NODES * data_dir_bytes(profile.data.rows)


def memory_mb(profile: Profile) -> tuple[int, str]:
    """Every node's buffer pool, which holds the data, and what it needs beyond."""
    pool = buffer_pool_mb(profile)
    return NODES * (pool + SERVER_ALLOWANCE_MB), (
        f"two 2-node clusters up at once, each node a {pool:,} MB buffer pool + "
        f"{SERVER_ALLOWANCE_MB} MB; use smaller data (data.tables, data.table_size)"
    )


# -- the pairs, up --------------------------------------------------------------------------------
class PairOnHosts(GaleraPair):
    """A Galera pair whose nodes live each on its own emulated host, the two joined by a veth
    pair of their own (net/netns.py), limited to `rate_mbit` (None: as fast as the veth
    goes).  On any exit the namespaces go after the nodes; after a SIGKILL `encbench clean`
    finds them in the link registry."""

    def __init__(
        self,
        variant: str,
        run_dir: Path,
        *,
        pool_mb: int,
        rate_mbit: float | None,
        made: pki.Pki | None,
        log: Callable[[str], None],
        study: str,
    ) -> None:
        super().__init__(variant, run_dir, pool_mb=pool_mb, made=made, log=log)
        self.rate_mbit = rate_mbit
        self.study = study  # what a refusal names
        self.link: netns.Link | None = None

    def __enter__(self) -> PairOnHosts:
        try:
            try:
                self.link = self.stack.enter_context(netns.two_hosts(0.0, self.rate_mbit))
            except netns.NetnsUnavailable as exc:
                raise BadInput(f"{self.study}: {exc}; run as root") from exc
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


def provision(
    pair: PairOnHosts, profile: Profile, prepare_log: Path, log: Callable[[str], None], study: str
) -> None:
    """The pair started (node 2 joined to an empty database), then the data loaded on node 1
    with the marker table, and waited for until node 2 has applied it all."""
    pair.start()
    data = profile.data
    log(f"{study}: loading {data.tables} × {data.table_size:,} rows ({pair.variant})")
    sysbench.prepare(
        pair.node1.endpoint(),
        tables=data.tables,
        table_size=data.table_size,
        log=prepare_log,
        # Half the rate a lone server is held to: every commit is certified with node 2.
        timeout_s=max(600, data.rows / (sysbench.PREPARE_ROWS_PER_S / 2)),
    )
    pair.create_marker_table()
    pair.wait_applied()


@contextmanager
def both_clusters(
    store: ResultStore, profile: Profile, log: Callable[[str], None], study: str
) -> Iterator[dict[str, PairOnHosts]]:
    """The plain and the TLS cluster, started, loaded and described in the study's record
    (`study`.json); both torn down on any exit.  Two clusters rather than one restarted per
    variant: a restart of both nodes (and node 2's state transfer) per run would cost more
    than the run, and one restart per cell would leave the variants unpaired in time."""
    for line in netns.clean_stale():  # what a killed run left: never a live run's
        log(f"{study}: {line}")
    spec = pairs_options(profile)
    with ExitStack() as stack:
        # Last out: DIR/sandbox once both clusters' sandboxes are gone.
        stack.callback(remove_empty_sandbox_dir, store)
        made = pki.generate(store.path, spec.key_type, peer=True)
        clusters = {
            variant: stack.enter_context(
                PairOnHosts(
                    variant,
                    store.path,
                    pool_mb=buffer_pool_mb(profile),
                    rate_mbit=spec.rate_mbit,
                    made=made if variant == "encrypted" else None,
                    log=lambda line: log(f"{study}: {line}"),
                    study=study,
                )
            )
            for variant in VARIANTS
        }
        for variant, cluster in clusters.items():
            prepare_log = store.path / "logs" / f"{study}-prepare-{variant}.log"
            provision(cluster, profile, prepare_log, log, study)
        record = store.read_json(f"{study}.json") or {}
        record.update(describe(clusters, profile, made))
        store.write_json(f"{study}.json", record)
        yield clusters


def describe(clusters: dict[str, PairOnHosts], profile: Profile, made: pki.Pki) -> dict[str, Any]:
    node1 = clusters["plain"].node1
    data = profile.data
    spec = pairs_options(profile)
    return {
        "clusters": {v: c.describe() for v, c in clusters.items()},
        "link": {"rate_mbit": spec.rate_mbit, "method": "veth pair per cluster"},
        "data": {
            "tables": data.tables,
            "table_size": data.table_size,
            "database_bytes": tree_bytes(node1.paths.datadir / node1.database),
        },
        "mariadb_version": node1.version(),
        "galera_version": status_value(node1, "wsrep_provider_version"),
        "key_type": spec.key_type,
        "certificate": pki.describe(made.server_cert),
    }


# -- the study both build on ----------------------------------------------------------------------
class GaleraPairStudy(StudyBasics):
    """A study measured on both pairs (engine/study.py): both up for the whole run, one
    variant's pair measured at a time (they share the machine), and every cell proven on
    both pairs' links before it is measured — the proofs kept in the study's record
    (`<name>.json`, "proofs" by cell).  A study adds its cells, its per-cell proof on one
    pair (`prove_cell`) and its runs."""

    name: str

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.clusters: dict[str, PairOnHosts] = {}
        self.record: dict[str, Any] = {}

    @property
    def record_file(self) -> str:
        return f"{self.name}.json"

    @contextmanager
    def setup(self, todo: Sequence[Any]) -> Iterator[None]:
        with both_clusters(self.store, self.profile, self.progress.log, self.name) as clusters:
            self.clusters = clusters
            self.record = self.store.read_json(self.record_file) or {}
            try:
                yield
            finally:
                self.clusters = {}

    def cluster(self, variant: str) -> PairOnHosts:
        assert self.clusters, "a cell is measured inside setup()"
        return self.clusters[variant]

    @contextmanager
    def open_cell(self, cell: Any) -> Iterator[None]:
        proofs = {}
        for variant in VARIANTS:
            self.progress.log(f"{cell.label}: proving the {variant} cluster's link")
            proofs[variant] = self.prove_cell(cell, variant)
        self.record.setdefault("proofs", {})[cell.slug] = proofs
        self.store.write_json(self.record_file, self.record)
        yield

    def prove_cell(self, cell: Any, variant: str) -> dict[str, Any]:
        """The per-cell proof on one variant's pair: its findings; raises ProofError."""
        raise NotImplementedError


# -- what a per-cell proof reads of node 2's link -------------------------------------------------
def read_capture(where: str, found: dict[str, Any], crossed: int, copied: int) -> dict[str, Any]:
    """A capture of node 2's link (proof/wire.py's findings) as a proof records it: node 2
    holds every marker row node 1 wrote, and the capture saw at least half the bytes that
    crossed the link, or it cannot vouch for it; raises ProofError.  Its marker hits by
    port, what it saw, and the first TLS ServerHello's protocol and suite ("": none)."""
    if copied != MARKER_ROWS:
        raise ProofError(f"{where}: node 2 holds {copied} of node 1's {MARKER_ROWS} marker rows")
    by_port = {str(k): int(v) for k, v in (found.get("hits_by_port") or {}).items()}
    dropped = int(found["dropped"])
    hellos = found.get("hellos") or []
    seen = link_capture.vouch(where, found, crossed)
    return {
        "marker_hits": sum(by_port.values()),
        "marker_hits_by_port": by_port,
        "bytes_by_port": found.get("bytes_by_port") or {},
        "payload_bytes": seen,
        "link_bytes": crossed,
        "frames": int(found["frames"]),
        "dropped": dropped,
        "protocol": hellos[0]["protocol"] if hellos else "",
        "cipher": hellos[0]["cipher"] if hellos else "",
    }


def root(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


# What both studies need of this machine and leave on it (their definitions' `here`).
HERE = Here(disk_bytes=disk_bytes, memory_mb=memory_mb, tools=needs, root=root, creates=CREATES)
