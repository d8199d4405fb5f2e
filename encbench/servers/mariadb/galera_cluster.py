"""One Galera cluster of sandboxed nodes (galera.py): what a Galera pair's two nodes
(galera_pair.py: the replication and rejoin studies') and the state-transfer study's two or
three share — their options, their start until Synced, an emptied data directory, the marker
rows of the proofs on the wire.  Each node is a sandbox on its own emulated host; what uses
the cluster makes the hosts (net/netns.py) and places a node on each, by its role (a pair's
1 and 2; state transfer's donor, joiner and peer).

A context manager: on success, error, Ctrl-C or SIGTERM every node is stopped (with the SST
scripts, socat, stunnel and rsync daemons in its process group) and its sandbox deleted,
its error log kept; whatever the study entered into `stack` (its hosts) goes after them.
After a SIGKILL `encbench clean` finds the nodes in the sandbox registry."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
from collections.abc import Hashable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Generic, Self, TypeVar

from encbench.errors import BadInput
from encbench.servers import registry
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.options import common_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.sandbox_dirs import clear_stale_sandbox

SYNC_POLL_S = 0.05
# A joining node's rsync daemon, started by root, drops to rsync's default user.
RSYNC_DAEMON_USER = "nobody"
# The table of a known plaintext, written on one node for the proofs on the wire.
MARKER_TABLE = "encbench_marker"

Role = TypeVar("Role", bound=Hashable)


def status_value(node: SandboxServer, name: str) -> str:
    rows = node.query(f"SHOW GLOBAL STATUS LIKE '{name}'")
    return str(rows[0][1]) if rows else ""


def variable_value(node: SandboxServer, name: str) -> str:
    rows = node.query(f"SHOW GLOBAL VARIABLES LIKE '{name}'")
    return str(rows[0][1]) if rows else ""


def marker_notes(marker: str, rows: int) -> list[str]:
    """The marker rows' text: the same marker at different offsets, so that one split by a
    stream's frame is not every one."""
    return [f"{'x' * 17 * i}{marker}" for i in range(rows)]


def hand_to_rsync(node: SandboxServer) -> None:
    """Before an rsync SST (or IST) into the node's data directory: the joining node's rsync
    daemon, started by root, drops to rsync's default `nobody` (wsrep_sst_rsync's rsyncd.conf
    sets no uid; a packaged server runs as `mysql`, whose files its daemon then owns): it
    must own the directory it fills.  The nodes, running as root, read what it writes."""
    if os.geteuid() == 0:
        nobody = pwd.getpwnam(RSYNC_DAEMON_USER)
        os.chown(node.paths.datadir, nobody.pw_uid, nobody.pw_gid)


class GaleraCluster(Generic[Role]):
    """The nodes by role, each in its sandbox under `roots`, with a buffer pool of `pool_mb`;
    a destroyed node's error log is kept in `logs`."""

    def __init__(self, roots: Mapping[Role, Path], *, pool_mb: int, logs: Path) -> None:
        self.roots = dict(roots)
        for root in self.roots.values():
            clear_stale_sandbox(root)
        self.pool_mb = pool_mb
        self.logs = logs
        self.cluster_name = f"encbench-{secrets.token_hex(4)}"
        self.stack = ExitStack()
        self.nodes: dict[Role, SandboxServer] = {}
        self.hosts: dict[Role, galera.Node] = {}

    def __enter__(self) -> Self:
        """The study's own enters its hosts into `stack` and places a node on each."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stack.close()

    def place(
        self, role: Role, *, name: str, node_name: str, address: str, launch: Sequence[str]
    ) -> SandboxServer:
        """The node of `role` on its host: `address` on the hosts' link, `launch` the words
        that start a program inside that host.  `name` names its sandbox, `node_name` the
        Galera node."""
        root = self.roots[role]
        self.hosts[role] = galera.Node(node_name, address)
        # The SST scripts' mktemp goes into the sandbox, not /tmp.
        env = ["env", f"TMPDIR={root.absolute() / 'tmp'}"]
        node = SandboxServer(name, root, launch_prefix=[*launch, *env])
        self.nodes[role] = node
        self.stack.callback(node.destroy, keep_log_in=self.logs)
        return node

    def server_options(self, role: Role) -> dict[str, str]:
        """The node's options as a server, without Galera's: what it is initialized with."""
        node = self.nodes[role]
        return common_options(
            node.paths,
            port=node.port,
            buffer_pool_mb=self.pool_mb,
            run_as_root=os.geteuid() == 0,
            binlog=False,
        )

    def node_options(
        self,
        role: Role,
        *,
        peers: tuple[galera.Node, ...],
        sst_method: str,
        provider_extra: tuple[str, ...] = (),
        sst_donor: str = "",
    ) -> dict[str, str]:
        """The node's options as a member joining `peers` (none: it bootstraps the cluster);
        the rest as galera.wsrep_options says."""
        provider = galera.provider()
        if provider is None:
            raise BadInput(f"the Galera provider is missing: {galera.PROVIDER_HINT}")
        options = self.server_options(role)
        options.update(
            galera.wsrep_options(
                self.hosts[role],
                cluster=self.cluster_name,
                peers=peers,
                sst_method=sst_method,
                user=self.nodes[role].user,
                provider_path=provider,
                provider_extra=provider_extra,
                sst_donor=sst_donor,
            )
        )
        return options

    def empty(self, role: Role) -> None:
        """The node stopped and its data directory emptied (grastate with it), so that its
        next start needs a full SST."""
        node = self.nodes[role]
        node.stop()
        datadir = node.paths.datadir
        if (node.root / registry.SANDBOX_MARKER).exists() and datadir.is_dir():
            shutil.rmtree(datadir)
        datadir.mkdir()

    def wait_state(self, node: SandboxServer, want: int, timeout_s: float) -> None:
        galera.wait_state(node, want, timeout_s, SYNC_POLL_S)

    def start_synced(
        self,
        role: Role,
        options: dict[str, str],
        timeout_s: float,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """The node of `role` started with `options` (and `env`) and waited for until Synced,
        whatever state transfer it needs, within `timeout_s` for each."""
        node = self.nodes[role]
        node.start(options, timeout_s=timeout_s, poll_s=SYNC_POLL_S, env=env)
        self.wait_state(node, galera.SYNCED, timeout_s)
