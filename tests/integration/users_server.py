"""The user's own server for the target tests: a sandbox started outside encbench, on another
emulated host where this machine allows it.

Remote: the server runs in one network namespace and encbench in another (netns.two_hosts),
joined by a veth pair; the link's delay is encbench's userspace delay relay in the client's
namespace (this kernel has no netem), which encbench dials as the DSN's host and port.  The
server sees encbench arrive from the client namespace's address, the only host its users are
granted from, so a run that succeeds came over the link.  Only the namespaces made here
receive traffic.  Where namespaces cannot be made (not root), the server is on loopback.

It has what a user's server would have for both studies: file_key_management, TLS with a
certificate of the user's CA (the client certificate the tests give encbench is that CA's
too), a TCP user with a password, and someone else's database that must stay untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from encbench import proc
from encbench.net import delay, netns, tunnels
from encbench.servers import keys, pki
from encbench.servers.mariadb import tls
from encbench.servers.mariadb.options import server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.variants import EncryptionSpec
from tests.helpers import encbench

PASSWORD = "not-a-real-secret-7"
ALL_ON_OURS = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX"
RTT_MS = 4.0


@dataclass
class UsersServer:
    server: SandboxServer
    host: str  # what encbench dials: the delay relay in its namespace, or the server
    port: int
    client_addr: str  # where the server sees encbench come from
    made: pki.Pki  # the user's CA, server and client certificates
    prefix: list[str] = field(default_factory=list)  # runs a command on the client's host
    rtt_ms: float = 0.0  # the link's round-trip time (0 on loopback)
    ssh_config: Path | None = None  # `ssh -F` file for SSH_HOST: the server's host's sshd
    server_prefix: list[str] = field(default_factory=list)  # runs a command on its host
    server_addr: str = "127.0.0.1"  # where its host listens (an sshd too)

    def add_user(self, name: str, process: bool = True) -> None:
        at = f"'{name}'@'{self.client_addr}'"
        self.server.query(f"CREATE USER {at} IDENTIFIED BY '{PASSWORD}'")
        self.server.query(f"GRANT {ALL_ON_OURS} ON `encbench\\_%`.* TO {at}")
        if process:
            self.server.query(f"GRANT PROCESS ON *.* TO {at}")

    def dsn(self, user: str = "bench", tls_files: bool = False, ssh: bool = False) -> str:
        params = {}
        if tls_files:
            params |= {
                "ssl-ca": str(self.made.ca_cert),
                "ssl-cert": str(self.made.client_cert),
                "ssl-key": str(self.made.client_key),
            }
        if ssh:
            assert self.ssh_config is not None, "users_server(..., sshd=True)"
            params |= {"ssh": SSH_HOST, "ssh-config": str(self.ssh_config)}
        query = f"?{urlencode(params)}" if params else ""
        return f"mysql://{user}@{self.host}:{self.port}/{query}"

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """encbench on the client's host, with the password in MYSQL_PWD."""
        return encbench(*args, env={"MYSQL_PWD": PASSWORD}, cwd=cwd, prefix=self.prefix)


SSH_HOST = "users-host"


def _sshd(stack: contextlib.ExitStack, root: Path, prefix: list[str], address: str) -> Path:
    """An sshd on the server's host (its namespace) that lets this user in with a generated
    key and runs commands (the CPU reader's shell); returns an `ssh -F` file naming it
    SSH_HOST.  Stopped by `stack`."""
    directory = root / "users-sshd"
    directory.mkdir(mode=0o700)
    host_key = tunnels._keygen(directory / "host_ed25519", "ed25519")
    client_key = tunnels._keygen(directory / "client_ed25519", "ed25519")
    authorized = directory / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    user = pwd.getpwuid(os.geteuid()).pw_name
    sshd = proc.which("sshd") or "/usr/sbin/sshd"
    client_config = directory / "ssh_config"

    def daemons() -> list[tunnels.Daemon]:
        """The sshd on a port chosen now, and the files that name the port."""
        port = tunnels.free_port()
        config = directory / "sshd_config"
        config.write_text(
            f"ListenAddress {address}:{port}\nHostKey {host_key}\nPidFile none\nUsePAM no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            f"AuthorizedKeysFile {authorized}\nStrictModes no\nAllowUsers {user}\n"
            "PermitRootLogin prohibit-password\nAllowTcpForwarding no\nPermitTTY no\n"
            "X11Forwarding no\nLogLevel ERROR\n"
            # This machine's root ~/.bashrc runs pyenv's rehash, which can wait 60 s for a lock
            # other sessions hold; a server's host has its own rc files.  bash reads ~/.bashrc
            # for an ssh command only at SHLVL < 2, so the test's sessions start above it.
            "SetEnv SHLVL=5\n"
        )
        known = directory / "known_hosts"
        kind, key = Path(f"{host_key}.pub").read_text().split()[:2]
        known.write_text(f"[{address}]:{port} {kind} {key}\n")
        client_config.write_text(
            f"Host {SSH_HOST}\n  HostName {address}\n  Port {port}\n  User {user}\n"
            f"  IdentityFile {client_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n"
        )
        return [
            tunnels.Daemon(
                "users' sshd",
                [*prefix, sshd, "-D", "-e", "-f", str(config)],
                directory / "log",
                port,
            )
        ]

    stack.enter_context(tunnels._privsep_dir())
    tunnels.start_on_free_ports(stack, daemons)
    return client_config


@contextlib.contextmanager
def with_sshd(found: UsersServer, root: Path) -> Iterator[UsersServer]:
    """found, its server's host now also letting encbench in over ssh (an sshd of its own,
    under root, stopped on exit): for a test that shares a server started without one.  The
    sshd lives only as long as the test, as in users_server(..., sshd=True)."""
    with contextlib.ExitStack() as stack:
        config = _sshd(stack, root, found.server_prefix, found.server_addr)
        yield dataclasses.replace(found, ssh_config=config)


@contextlib.contextmanager
def users_server(
    root: Path, remote: bool = True, sshd: bool = False, buffer_pool_mb: int = 64
) -> Iterator[UsersServer]:
    """Start it (remote when this machine allows namespaces), and remove it all on exit;
    with sshd, its host also lets encbench in over ssh (for the server's CPU)."""
    with contextlib.ExitStack() as stack:
        link: netns.Link | None = None
        if remote:
            with contextlib.suppress(netns.NetnsUnavailable):
                link = stack.enter_context(netns.two_hosts())
        server = SandboxServer(
            "users",
            root / "users-server",
            use_cgroup=False,
            launch_prefix=netns.exec_prefix(link.server_ns) if link else [],
        )
        stack.callback(server.destroy)
        server_ips = ("127.0.0.1",) + ((link.server_addr,) if link else ())
        made = pki.generate(root, "rsa2048", server_ips=server_ips)
        options = server_options(
            "encrypted",
            EncryptionSpec(),
            server.paths,
            port=server.port,
            buffer_pool_mb=buffer_pool_mb,
            key_file=keys.key_file(keys.private_dir(root)),
            run_as_root=os.geteuid() == 0,
        )
        options |= tls.server_options(made, tls_version="TLSv1.3")
        if link is not None:
            # In its namespace the server has only loopback and the veth end.
            options["bind-address"] = "0.0.0.0"
        server.initialize(options)
        server.start(options)
        found = UsersServer(server, "127.0.0.1", server.port, "127.0.0.1", made)
        if link is not None:
            client_ns = netns.exec_prefix(link.client_ns)
            relay = delay.relay(
                root, upstream=(link.server_addr, server.port), rtt_ms=RTT_MS, prefix=client_ns
            )
            host, port = stack.enter_context(relay)
            found = UsersServer(
                server,
                host,
                port,
                link.client_addr,
                made,
                prefix=client_ns,
                rtt_ms=RTT_MS,
                server_prefix=netns.exec_prefix(link.server_ns),
                server_addr=link.server_addr,
            )
        if sshd:
            found.ssh_config = _sshd(stack, root, found.server_prefix, found.server_addr)
        found.add_user("bench")
        # Someone else's data on the same server: never touched.
        server.query("CREATE DATABASE theirs")
        server.query("CREATE TABLE theirs.t (id INT PRIMARY KEY) ENGINE=InnoDB")
        server.query("INSERT INTO theirs.t VALUES (42)")
        yield found
