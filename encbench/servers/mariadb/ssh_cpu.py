"""A MariaDB target's CPU on its own host, over ssh where `[target] ssh` allows it
(servers/remote_cpu.py): the server names its pid file (`SELECT @@pid_file`)."""

from __future__ import annotations

from collections.abc import Callable

from encbench.results.store import ResultStore
from encbench.servers import mariadb
from encbench.servers.mariadb.user_server import UserServer
from encbench.servers.remote_cpu import SshAccess, SshCpu


def open_remote_cpu(
    server: UserServer, spec: SshAccess, store: ResultStore, log: Callable[[str], None]
) -> SshCpu | None:
    """The server's CPU over ssh where [target] ssh allows it (servers/remote_cpu.py), else None."""
    if not spec.ssh:
        return None
    pid_file = str(server.query("SELECT @@pid_file")[0][0])
    log(f"server CPU: reading /proc/PID/stat on {spec.ssh} over ssh ({pid_file})")
    cpu = SshCpu(spec.ssh, spec.ssh_config, store.path / "logs" / "ssh-cpu.log", mariadb.KIND)
    try:
        cpu.open(pid_file)
    except BaseException:
        cpu.close()
        raise
    return cpu
