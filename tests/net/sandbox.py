"""One sandboxed MariaDB that TCP clients can reach with a generated password, optionally with
TLS on the given PKI: shared by the in-transit tests and benchmarks/."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from encbench.servers import keys
from encbench.servers.mariadb import tls
from encbench.servers.mariadb.options import server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.pki import Pki
from encbench.servers.target import Connection
from encbench.servers.variants import EncryptionSpec
from encbench.workloads import connrate


@dataclass(frozen=True)
class TcpSandbox:
    server: SandboxServer
    target: Connection
    password: str


@contextlib.contextmanager
def tcp_sandbox(
    root: Path, *, name: str = "bench", made: Pki | None = None, buffer_pool_mb: int = 64
) -> Iterator[TcpSandbox]:
    """Start the server under root/sandbox, yield it with its TCP target (user `bench`,
    database `sbtest`) and password, and destroy it on every exit path."""
    root.mkdir(parents=True, exist_ok=True)
    server = SandboxServer(name, root / "sandbox")
    options = server_options(
        "plain",
        EncryptionSpec(),
        server.paths,
        port=server.port,
        buffer_pool_mb=buffer_pool_mb,
        key_file=keys.key_file(keys.private_dir(root)),
        run_as_root=os.geteuid() == 0,
    )
    if made is not None:
        options |= tls.server_options(made, tls_version="TLSv1.3")
    try:
        server.initialize(options)
        server.start(options)
        server.query("CREATE DATABASE IF NOT EXISTS sbtest")
        target = Connection.tcp("127.0.0.1", server.port, "bench", "sbtest")
        password = keys.password(keys.private_dir(root), "bench")
        connrate.create_user(server, target, password, ("127.0.0.1",))
        yield TcpSandbox(server, target, password)
    finally:
        server.destroy()
