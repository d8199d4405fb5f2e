"""The state-transfer study's cluster (servers/mariadb/galera_cluster.py): two Galera nodes, each a
sandbox on its own emulated host — the donor in one network namespace, the joiner in the
other, joined by a veth pair (net/netns.py, with the profile's rate limit if any).  The donor
bootstraps the cluster and holds the profile's sysbench data and a marker table (a known
plaintext, for the proof on the wire); the joiner's data directory is emptied before each
transfer, so every one is a full SST.

With `nodes = 3` a third node, the peer, on a third host of the same switch
(netns.three_hosts), joins once by its own SST and stays Synced throughout: the joiner
then rejoins a cluster that keeps its quorum without it, as a node re-provisioned in a
production cluster does.  Every transfer still comes from the donor (`wsrep_sst_donor`, no
fallback; the per-run proof reads the donor's own SST log), and a donor restarted for
another AES-NI mask or after a raw pipeline rejoins through the peer instead of
bootstrapping a second cluster.

A context manager: on success, error, Ctrl-C or SIGTERM every node is stopped (with every
SST script, socat, stunnel and rsync daemon in their process groups), their sandboxes
deleted and the namespaces removed; after a SIGKILL `encbench clean` finds the nodes in the
sandbox registry and the namespaces in the link registry."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.capacity import FULL_IA32CAP, NO_AESNI_IA32CAP, SEED_STUDY_IA32CAP
from encbench.errors import BadInput, ServerError, ToolError
from encbench.net import netns
from encbench.profiles.profile import Profile
from encbench.results.store import ResultStore
from encbench.servers import pki
from encbench.servers.local import tree_bytes
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.galera_cluster import (
    MARKER_TABLE,
    SYNC_POLL_S,
    GaleraCluster,
    hand_to_rsync,
    marker_notes,
    status_value,
)
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.sandbox_dirs import remove_empty_sandbox_dir
from encbench.servers.sizing import rows_mb
from encbench.servers.variants import CALIBRATION_SIDES
from encbench.studies.state_transfer import at_rest, pipelines
from encbench.studies.state_transfer.options import (
    PIPELINES,
    SOCAT_METHODS,
    SST_CIPHERS,
    state_transfer_options,
)
from encbench.studies.state_transfer.records import SstCell
from encbench.workloads import sysbench

RECORD = "state-transfer.json"
MARKER_ROWS = 4  # the same marker in several rows (marker_notes): one split is not all
DONOR_SYNC_TIMEOUT_S = 120.0


def buffer_pool_mb(profile: Profile) -> int:
    """Enough to load the data; a state transfer copies files, not pages from the pool."""
    data = state_transfer_options(profile).data(profile.data)
    return max(64, min(1024, int(rows_mb(data.rows)) + 32))


def sockopt(cell: SstCell) -> str:
    """socat address options of an encrypted stream for the cell's cipher (mariabackup's SST
    and the raw pipelines): a TLS 1.2 suite needs max-version (OpenSSL 3 would negotiate TLS
    1.3 and ignore `cipher`)."""
    suite = SST_CIPHERS.get(cell.cipher, "") if cell.method in SOCAT_METHODS else ""
    return f",cipher={suite},max-version=TLS1.2" if suite else ""


def stream_encrypted(variant: str, calibration: bool) -> bool:
    """Whether a run of this variant encrypts its stream: in an A/A calibration neither side
    does (the `encrypted` role is a plain twin), so every difference found is noise."""
    return variant == "encrypted" and not calibration


MASK_VARIABLE = "OPENSSL_ia32cap"


# Per options.AesNi: "on" a mask that clears nothing, so that a value the user's environment
# carries cannot slow the accelerated side; "off" AES-NI and PCLMULQDQ cleared; "seed-mask"
# the seed's (capacity/measure.py says why each is what it is).
MASKS = {"on": FULL_IA32CAP, "off": NO_AESNI_IA32CAP, "seed-mask": SEED_STUDY_IA32CAP}


def openssl_env(aesni: str) -> dict[str, str]:
    """The OpenSSL capability mask of every process of a transfer."""
    return {MASK_VARIABLE: MASKS[aesni]}


def env_prefix(aesni: str) -> list[str]:
    """openssl_env as a launcher's words (`env NAME=VALUE`), for the raw pipelines' ends."""
    return ["env", *(f"{k}={v}" for k, v in openssl_env(aesni).items())]


def environment_of(pid: int, name: str) -> str:
    """A variable of a running process's environment as it started ("" when it has none
    or the process is gone)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return ""
    prefix = f"{name}=".encode()
    found = [item[len(prefix) :] for item in environ.split(b"\0") if item.startswith(prefix)]
    return found[0].decode(errors="replace") if found else ""


class Cluster(GaleraCluster[str]):
    def __init__(self, store: ResultStore, profile: Profile, log: Callable[[str], None]) -> None:
        sandbox = store.path / "sandbox"
        roles = ("donor", "joiner", "peer")[: state_transfer_options(profile).nodes]
        super().__init__(
            {role: sandbox / f"galera-{role}" for role in roles},
            pool_mb=buffer_pool_mb(profile),
            logs=store.path / "logs" / "state-transfer",
        )
        self.log = log
        self.store = store
        self.profile = profile
        self.spec = state_transfer_options(profile)
        self.marker = f"encbench-sst-marker-{secrets.token_hex(12)}"
        self.record: dict[str, Any] = store.read_json(RECORD) or {}
        self.link: netns.Link | None = None
        self.options: dict[str, dict[str, str]] = {}
        self.pki: pki.Pki | None = None
        # The mask the donor runs with: an SST cell with another restarts it (reset_joiner).
        self.donor_aesni = "on"
        # OPENSSL_ia32cap as each node's server really started with it (its SST scripts
        # inherit it): the per-cell proof checks it against the cell's.
        self.started_masks: dict[str, str] = {}
        # donor_encrypted_at_rest: the donor's tables and their rows, for the joiner's proof.
        self.encrypted_rows: dict[str, int] = {}

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> Cluster:
        try:
            for line in netns.clean_stale():  # what a killed run left: never a live run's
                self.log(f"state-transfer: {line}")
            rate = self.spec.rate_mbit
            try:
                hosts = (
                    netns.three_hosts(rate) if self.spec.nodes == 3 else netns.two_hosts(0, rate)
                )
                self.link = self.stack.enter_context(hosts)
            except netns.NetnsUnavailable as exc:
                raise BadInput(f"state-transfer: {exc}; run as root") from exc
            addresses = self._addresses()
            self.pki = pki.generate(
                self.store.path,
                self.spec.key_type,
                server_ips=(*addresses.values(), "127.0.0.1"),
            )
            namespaces = self._namespaces()
            # Registered before the nodes: an exit stack unwinds last-in first, so this runs
            # once both sandboxes are gone.
            self.stack.callback(remove_empty_sandbox_dir, self.store)
            for role in self.roots:
                self.place(
                    role,
                    name=role,
                    node_name=role,
                    address=addresses[role],
                    launch=netns.exec_prefix(namespaces[role]),
                )
        except BaseException:
            self.stack.close()
            raise
        return self

    def _namespaces(self) -> dict[str, str]:
        assert self.link is not None
        found = {"donor": self.link.server_ns, "joiner": self.link.client_ns}
        return found | ({"peer": self.link.peer_ns} if self.link.peer_ns else {})

    def _addresses(self) -> dict[str, str]:
        assert self.link is not None
        found = {"donor": self.link.server_addr, "joiner": self.link.client_addr}
        return found | ({"peer": self.link.peer_addr} if self.link.peer_ns else {})

    @property
    def donor(self) -> SandboxServer:
        return self.nodes["donor"]

    @property
    def joiner(self) -> SandboxServer:
        return self.nodes["joiner"]

    @property
    def joiner_ns(self) -> str:
        assert self.link is not None
        return self.link.client_ns

    @property
    def donor_addr(self) -> str:
        assert self.link is not None
        return self.link.server_addr

    @property
    def joiner_device(self) -> str:
        assert self.link is not None
        return netns.client_device(self.link)

    @property
    def sst_method(self) -> str:
        """The nodes' wsrep_sst_method outside an SST cell: the profile's first SST method
        (a profile of raw pipelines alone never joins the joiner)."""
        return next((m for m in self.spec.methods if m not in PIPELINES), "mariabackup")

    @property
    def has_peer(self) -> bool:
        """Whether the cluster has a third node (`nodes = 3`), set when it is made."""
        return "peer" in self.roots

    def _peers(self, role: str) -> tuple[galera.Node, ...]:
        """The nodes `role` joins: none for a donor that bootstraps the cluster (the first
        node to start), else every other member.  A third node that has started and died
        is an error, not a reason to go on with two: the record says three."""
        peer = self.nodes.get("peer")
        if role == "peer":
            return (self.hosts["donor"],)
        if peer is None or peer.process is None:  # no third node, or not started yet
            return () if role == "donor" else (self.hosts["donor"],)
        if peer.process.poll() is not None:
            raise ServerError(
                f"the third node (the peer) stopped (exit {peer.process.returncode}): the "
                "cluster is no longer the 3 nodes the record says",
                hint=f"its error log: {peer.paths.error_log}",
            )
        return (
            (self.hosts["peer"],) if role == "donor" else (self.hosts["donor"], self.hosts["peer"])
        )

    def server_options(self, role: str) -> dict[str, str]:
        """A node's options as a server, with encryption at rest on every node where the
        profile asks for it (the same key file: the joiner reads what it receives)."""
        options = super().server_options(role)
        if self.spec.donor_encrypted_at_rest:
            options.update(at_rest.options(self.store.path))
        return options

    def member_options(self, role: str, method: str) -> dict[str, str]:
        return self.node_options(
            role,
            peers=self._peers(role),
            sst_method=method,
            # With a peer, either member could donate: the measured one is the donor.
            sst_donor="donor" if role != "donor" and self.has_peer else "",
        )

    def sst_sections(self, cell: SstCell, variant: str) -> dict[str, dict[str, str]]:
        assert self.pki is not None
        return {
            "sst": galera.sst_section(
                encrypted=stream_encrypted(variant, self.profile.calibration),
                cert=self.pki.server_cert,
                key=self.pki.server_key,
                ca=self.pki.ca_cert,
                sockopt=sockopt(cell),
                backup_threads=cell.backup_threads,
            )
        }

    # -- provisioning -----------------------------------------------------------------------
    def provision(self) -> None:
        log = self.log
        data = state_transfer_options(self.profile).data(self.profile.data)
        donor = self.donor
        first = self.sst_method
        log("state-transfer: initializing the donor")
        donor.initialize(self.server_options("donor"))
        donor.start(self.member_options("donor", first), env=openssl_env(self.donor_aesni))
        self._note_mask("donor")
        self.wait_state(donor, galera.SYNCED, DONOR_SYNC_TIMEOUT_S)
        log(f"state-transfer: loading {data.tables} × {data.table_size:,} rows into the donor")
        sysbench.load(donor, data, self.store.path / "logs" / "state-transfer-prepare.log")
        encrypted = self.spec.donor_encrypted_at_rest
        donor.query(
            f"CREATE TABLE {donor.database}.{MARKER_TABLE} "
            "(id INT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE=InnoDB"
            # The wire proof's positive control needs the marker in plaintext on disk.
            + (" ENCRYPTED=NO" if encrypted else "")
        )
        for i, note in enumerate(marker_notes(self.marker, MARKER_ROWS), 1):
            donor.query(f"INSERT INTO {donor.database}.{MARKER_TABLE} VALUES (%s, %s)", (i, note))
        if encrypted:
            self._prove_donor_encrypted(data.tables)
        if self.has_peer:
            self._start_peer(first)
        self.joiner.initialize(self.member_options("joiner", first), install_db=False)
        self.record.update(
            {
                "nodes": self.spec.nodes,
                "cluster": {
                    role: {"address": self.hosts[role].address, "namespace": ns}
                    for role, ns in self._namespaces().items()
                },
                "link": {"rate_mbit": self.spec.rate_mbit, "method": self._link_method()},
                "data": {
                    "tables": data.tables,
                    "table_size": data.table_size,
                    "datadir_bytes": tree_bytes(donor.paths.datadir),
                    # The tables themselves: what every method must carry (mariadb-backup
                    # leaves the donor's redo log behind, rsync sends it whole).
                    "database_bytes": tree_bytes(donor.paths.datadir / donor.database),
                },
                "marker_table": f"{donor.database}.{MARKER_TABLE}",
                "buffer_pool_mb": self.pool_mb,
                "mariadb_version": donor.version(),
                "galera_version": self._galera_version(),
                "key_type": self.spec.key_type,
                "certificate": pki.describe(self.pki.server_cert) if self.pki else "",
                "donor_load": self._donor_load(),
            }
        )
        if self.profile.calibration:
            # A/A: the `encrypted` role is a plain twin; both streams go as plain does.
            self.record |= {"calibration": True, "sides": dict(CALIBRATION_SIDES)}
        if any(m in PIPELINES for m in self.spec.methods):
            self.record.setdefault("pipelines", {}).update(
                {
                    "socat_buffer_kib": self.spec.socat_buffer_kib,
                    "donor": {
                        "tar and rsync": "stopped (a clean shutdown; restarted after the cell)",
                        "xbstream": "running, idle (no load)",
                    },
                    "timed": "sender's start → receiver's exit, then sync -f of the target",
                }
            )
        self.store.write_json(RECORD, self.record)

    def _prove_donor_encrypted(self, tables: int) -> None:
        """The donor's sysbench tables encrypted at rest, recorded with their rows (the
        joiner's proof after every transfer compares its copies with them)."""
        names = [f"sbtest{i}" for i in range(1, tables + 1)]
        count = at_rest.prove(self.donor, "donor", names)
        self.encrypted_rows = at_rest.row_counts(self.donor, names)
        self.record["at_rest"] = {
            "key_management": "file_key_management",
            "algorithm": at_rest.SPEC.algorithm,
            "donor_tables_encrypted": count,
            "tables": len(names),
            "marker_table": "not encrypted (ENCRYPTED=NO)",
        }

    def _donor_load(self) -> dict[str, Any] | None:
        """The load on the donor during each measured SST, as the report states it."""
        spec = self.spec
        if not spec.donor_load_threads:
            return None
        return {
            "workload": spec.donor_load_workload,
            "threads": spec.donor_load_threads,
            "rate_tps": spec.donor_load_rate,
            "before_s": spec.donor_load_before_s,
        }

    def _link_method(self) -> str:
        if self.has_peer:
            return "a switch (bridge) and a veth pair per host (tbf rate)"
        return "veth pair (tbf rate)"

    def _start_peer(self, method: str) -> None:
        """Untimed: the third node joins by a plain SST from the donor and stays Synced."""
        self.log("state-transfer: the third node joins (a plain SST, not measured)")
        peer = self.nodes["peer"]
        options = self.member_options("peer", method)
        peer.initialize(options, install_db=False)
        self._hand_to_rsync(peer, method)
        assert self.pki is not None
        plain = galera.sst_section(
            encrypted=False,
            cert=self.pki.server_cert,
            key=self.pki.server_key,
            ca=self.pki.ca_cert,
        )
        for node in (self.donor, peer):
            node.set_sections({"sst": plain})
        self.start_synced("peer", options, self.spec.sst_timeout_s, env=openssl_env("on"))

    def _galera_version(self) -> str:
        return status_value(self.donor, "wsrep_provider_version")

    # -- one state transfer -----------------------------------------------------------------

    def reset_joiner(self, cell: SstCell, variant: str) -> None:
        """Untimed: the joiner stopped and emptied, both nodes' [sst] set for the variant, the
        donor Synced (not still a donor of the last transfer)."""
        self.empty("joiner")
        self._hand_to_rsync(self.joiner, cell.method)
        sections = self.sst_sections(cell, variant)
        for node in self.nodes.values():
            node.set_sections(sections)
        if self.has_peer:
            # Untimed: the peer still a Synced member (a dead one raises here).
            self.wait_state(self.nodes["peer"], galera.SYNCED, DONOR_SYNC_TIMEOUT_S)
        if cell.aesni != self.donor_aesni:
            # The donor's SST script, and its socat or stunnel, inherit the donor's
            # environment: a cell with the other mask needs the donor started with it.
            self.log(f"state-transfer: restarting the donor with AES-NI {cell.aesni}")
            self.donor.stop()
            self.start_donor(cell.aesni)
        self.wait_state(self.donor, galera.SYNCED, DONOR_SYNC_TIMEOUT_S)

    @staticmethod
    def _hand_to_rsync(node: SandboxServer, method: str) -> None:
        """galera_cluster.hand_to_rsync, where the node's state transfer is by rsync."""
        if method == "rsync":
            hand_to_rsync(node)

    def join(self, cell: SstCell) -> None:
        """Start the joiner and wait until it is Synced: the measured part of a run."""
        joiner = self.joiner
        joiner.start(
            self.member_options("joiner", cell.method),
            timeout_s=self.spec.sst_timeout_s,
            poll_s=SYNC_POLL_S,
            env=openssl_env(cell.aesni),
        )
        self._note_mask("joiner")
        self.wait_state(joiner, galera.SYNCED, self.spec.sst_timeout_s)

    # -- the raw pipelines (pipelines.py) -----------------------------------------------------
    def stop_donor(self) -> None:
        """For tar, which reads the donor's files as the seed did: with the server stopped."""
        self.donor.stop()

    def start_donor(self, aesni: str | None = None) -> None:
        """The donor back, with the mask it had or the one given: it bootstraps the cluster
        again as its only node, or, with a third node, rejoins it (untimed; an IST after a
        clean stop, while the peer's gcache holds what the donor missed)."""
        self.donor_aesni = aesni or self.donor_aesni
        env = openssl_env(self.donor_aesni)
        options = self.member_options("donor", self.sst_method)
        if galera.joins(options):
            # Even an IST by rsync writes a file into the data directory.
            self._hand_to_rsync(self.donor, self.sst_method)
        self.donor.start(options, env=env)
        self._note_mask("donor")
        self.wait_state(self.donor, galera.SYNCED, DONOR_SYNC_TIMEOUT_S)

    def _note_mask(self, role: str) -> None:
        process = self.nodes[role].process
        mask = environment_of(process.pid, MASK_VARIABLE) if process is not None else ""
        self.started_masks[role] = mask

    def masks(self) -> dict[str, str]:
        """OPENSSL_ia32cap of each node's server as it started, read back from the process
        (the SST scripts and their socat, stunnel inherit it)."""
        return dict(self.started_masks)

    def pipeline_run(self, cell: SstCell, variant: str, logs: Path) -> pipelines.Run:
        assert self.link is not None and self.pki is not None
        donor, joiner = self.donor, self.joiner
        # Every program of the pipeline at both ends (socat, and tar, mariadb-backup, rsync
        # that do no cryptography) runs with the cell's mask.
        mask = env_prefix(cell.aesni)
        return pipelines.Run(
            cell=cell,
            encrypted=stream_encrypted(variant, self.profile.calibration),
            sockopt=sockopt(cell),
            ends=pipelines.Ends(
                donor_prefix=[*netns.exec_prefix(self.link.server_ns), *mask],
                joiner_prefix=[*netns.exec_prefix(self.link.client_ns), *mask],
                joiner_addr=self.link.client_addr,
                cert=self.pki.server_cert,
                key=self.pki.server_key,
                ca=self.pki.ca_cert,
                client_cert=self.pki.client_cert,
                client_key=self.pki.client_key,
                buffer_kib=self.spec.socat_buffer_kib,
                donor_net_prefix=[*netns.net_prefix(self.link.server_ns), *mask],
            ),
            datadir=donor.paths.datadir,
            backup=pipelines.BackupSource(
                defaults_file=donor.defaults_file,
                socket=donor.paths.socket,
                user=donor.user,
                work_dir=donor.paths.tmpdir / "pipeline-backup",
            ),
            target=joiner.root / "pipeline-target",
            logs=logs,
            timeout_s=self.spec.sst_timeout_s,
        )

    def check_marker_copied(self) -> None:
        """The joiner holds the donor's data after a transfer: its marker rows match."""
        rows = self.joiner.query(f"SELECT COUNT(*) FROM {self.joiner.database}.{MARKER_TABLE}")
        if int(rows[0][0]) != MARKER_ROWS:
            raise ToolError(
                f"the joiner has {rows[0][0]} of the donor's {MARKER_ROWS} marker rows after "
                "its state transfer",
                phase="state transfer",
                hint=f"see {self.joiner.paths.error_log}",
            )
        if self.encrypted_rows:
            at_rest.prove_copied(self.joiner, self.encrypted_rows)
