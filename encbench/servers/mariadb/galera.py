"""A Galera node is a sandbox (servers/mariadb/sandbox.py) with wsrep options: MariaDB's galera-4
provider, its own address, group-communication port, IST port and SST port, and an [sst]
group that the SST scripts (wsrep_sst_mariabackup, wsrep_sst_rsync) read from the node's own
option file each time they run.  After MariaDB's mysql-test/suite/galera/galera_2nodes.cnf,
with every node on its own emulated host (a network namespace) instead of its own ports.

`wsrep_local_state` goes 1 Joining → 2 Donor/Desynced → 3 Joined → 4 Synced; a joiner that
answers `SELECT 1` has finished its state transfer, and Synced is when it serves like its
donor."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from encbench.errors import BadInput, ServerError
from encbench.machine.checks import Check

if TYPE_CHECKING:
    from encbench.servers.mariadb.sandbox import SandboxServer

PROVIDER_PATHS = (Path("/usr/lib/galera/libgalera_smm.so"), Path("/usr/lib/libgalera_smm.so"))
PROVIDER_HINT = "install it: apt-get install galera-4 (or `make setup`)"
GCOMM_PORT = 4567
IST_PORT = 4568
SST_PORT = 4444
SYNCED = 4
STATE_NAMES = {1: "Joining", 2: "Donor/Desynced", 3: "Joined", 4: "Synced"}


def provider() -> Path | None:
    return next((p for p in PROVIDER_PATHS if p.exists()), None)


@dataclass(frozen=True)
class Node:
    """Where one node lives on the emulated network."""

    name: str
    address: str  # its host's (namespace's) address on the link


def wsrep_options(
    node: Node,
    *,
    cluster: str,
    peers: tuple[Node, ...],
    sst_method: str,
    user: str,
    provider_path: Path,
    gcache_mb: int = 64,
    provider_extra: tuple[str, ...] = (),
    sst_donor: str = "",
) -> dict[str, str]:
    """The options that make a sandbox a Galera node.  No peers: it bootstraps the cluster
    (an empty gcomm:// address); otherwise it joins them.  `provider_extra`: more
    wsrep_provider_options (e.g. ssl_provider_options).  `sst_donor`: the one node a state
    transfer may come from (wsrep_sst_donor, without the trailing comma that would let
    Galera fall back to another)."""
    addresses = ",".join(f"{p.address}:{GCOMM_PORT}" for p in peers)
    provider_options = ";".join(
        [
            f"gmcast.listen_addr=tcp://{node.address}:{GCOMM_PORT}",
            f"ist.recv_addr={node.address}:{IST_PORT}",
            f"gcache.size={gcache_mb}M",
            # A node that leaves cleanly must not cost the other its primary component.
            "pc.weight=1",
            *provider_extra,
        ]
    )
    return {
        "wsrep_on": "ON",
        "wsrep_provider": str(provider_path),
        "wsrep_cluster_name": cluster,
        "wsrep_cluster_address": f"gcomm://{addresses}",
        "wsrep_node_name": node.name,
        "wsrep_node_address": f"{node.address}:{GCOMM_PORT}",
        "wsrep_node_incoming_address": node.address,
        "wsrep_sst_receive_address": f"{node.address}:{SST_PORT}",
        "wsrep_provider_options": provider_options,
        "wsrep_sst_method": sst_method,
        # The donor's mariadb-backup connects over the node's socket as the OS user the
        # sandbox authenticates by unix_socket: no password exists to leak.
        "wsrep_sst_auth": f"{user}:",
        "wsrep_slave_threads": "1",
        # What Galera requires of the server.
        "binlog_format": "ROW",
        "default_storage_engine": "InnoDB",
        "innodb_autoinc_lock_mode": "2",
    } | ({"wsrep_sst_donor": sst_donor} if sst_donor else {})


def joins(options: dict[str, str]) -> bool:
    """Whether a node with these options joins a cluster (else it bootstraps one)."""
    return options.get("wsrep_cluster_address", "gcomm://") != "gcomm://"


def ssl_provider_options(
    *, key: Path | None, cert: Path | None, ca: Path | None, cipher: str = ""
) -> tuple[str, ...]:
    """Galera's own TLS (socket.ssl_*): every connection between the nodes — the group
    communication on GCOMM_PORT, which carries the write sets, and IST on IST_PORT — under
    the given key and certificate, verified against `ca`.  No key and certificate: none (a
    plain cluster); a CA or cipher without them is refused, as it would be silently
    ignored."""
    if key is None or cert is None:
        if ca is not None or cipher:
            raise BadInput(
                "Galera's socket.ssl_ca or socket.ssl_cipher was given without "
                "socket.ssl_key and socket.ssl_cert: give the node a certificate and key"
            )
        return ()
    paths = {"socket.ssl_key": key, "socket.ssl_cert": cert, "socket.ssl_ca": ca}
    for name, path in paths.items():
        # wsrep_provider_options is one string split at ';'.
        if path is not None and (";" in str(path) or not path.is_absolute()):
            raise BadInput(f"{name} {path} must be an absolute path without ';'")
    options = ["socket.ssl=YES", f"socket.ssl_key={key}", f"socket.ssl_cert={cert}"]
    if ca is not None:
        options.append(f"socket.ssl_ca={ca}")
    if cipher:
        options.append(f"socket.ssl_cipher={cipher}")
    return tuple(options)


def provider_ssl(options: str) -> str:
    """socket.ssl as a node's wsrep_provider_options report it: "YES", "NO", or "" when
    they do not name it."""
    for part in options.split(";"):
        name, _, value = part.strip().partition("=")
        if name.strip() == "socket.ssl":
            return value.strip().upper()
    return ""


def sst_section(
    *,
    encrypted: bool,
    cert: Path,
    key: Path,
    ca: Path,
    sockopt: str = "",
    backup_threads: int = 1,
) -> dict[str, str]:
    """The [sst] group of both nodes for one variant.  Encrypted: ssl-mode REQUIRED with the
    run's certificate (mariabackup then streams through socat's openssl address, rsync through
    stunnel); plain: DISABLED, and no certificate at all, so that neither script can find one.
    `time=1` makes mariabackup log each stage's seconds; `sst-log-archive=0` keeps it from
    moving old logs to /tmp/sst_log_archive, outside the sandbox."""
    section = {
        "time": "1",
        "sst-log-archive": "0",
        "backup-threads": str(backup_threads),
        "progress": "none",
    }
    if encrypted:
        section.update(
            {"ssl-mode": "REQUIRED", "tcert": str(cert), "tkey": str(key), "tca": str(ca)}
        )
        if sockopt:
            section["sockopt"] = sockopt
    else:
        section["ssl-mode"] = "DISABLED"
    return section


def local_state(node: SandboxServer) -> int:
    """The node's wsrep_local_state (0 when it does not say)."""
    rows = node.query("SHOW GLOBAL STATUS LIKE 'wsrep_local_state'")
    return int(rows[0][1]) if rows and str(rows[0][1]).isdigit() else 0


def wait_state(node: SandboxServer, want: int, timeout_s: float, poll_s: float) -> None:
    """Wait until the node reaches `want` (e.g. SYNCED); ServerError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            now = local_state(node)
        except ServerError:
            # A joining node drops client connections as it changes state (seen here
            # during its IST): ask again while it lives; a dead node is the error.
            if node.process is None or node.process.poll() is not None:
                raise
            now = 0
        if now == want:
            return
        if time.monotonic() > deadline:
            raise ServerError(
                f"the {node.name} node did not reach {STATE_NAMES[want]} within "
                f"{timeout_s:.0f} s (wsrep_local_state {now})",
                hint=f"its error log: {node.paths.error_log}",
            )
        time.sleep(poll_s)


def provider_check() -> Check:
    """The check `doctor` and a run make of the provider, before any node starts."""
    found = provider()
    return Check(
        "Galera provider (libgalera_smm.so)",
        found is not None,
        str(found or "not found"),
        "" if found else "apt-get install galera-4 (or `make setup`)",
        "" if found else "galera-4",
    )
