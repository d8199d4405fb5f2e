"""Connection setup rate: sysbench running connect.lua (connect, SELECT 1, disconnect per
event, so events/s = connections/s), over TCP with TLS or without (sysbench's MariaDB driver:
servers/mariadb/sysbench.py); and connloop.c, a plain C client, only to check that the Lua
client is not what limits the rate.

Both clients authenticate as a password user over TCP (the unix_socket plugin does not apply
to TCP), with the password in MYSQL_PWD rather than on the command line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput, ToolError
from encbench.servers.mariadb import tls
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection
from encbench.workloads import sysbench

LUA_SCRIPT = Path(__file__).parent / "lua" / "connect.lua"
C_SOURCE = Path(__file__).with_name("connloop.c")
CC_HINT = "install a C compiler and the client headers: apt-get install gcc libmariadb-dev"


@dataclass(frozen=True)
class ConnRate:
    client: str  # "sysbench" or "connloop"
    ssl: bool
    threads: int
    connections: int
    seconds: float
    per_s: float
    errors: int


def create_user(
    server: SandboxServer, target: Connection, password: str, hosts: tuple[str, ...]
) -> None:
    """A password user for TCP clients, allowed only from the given client addresses."""
    for host in hosts:
        server.query(
            f"CREATE USER IF NOT EXISTS '{target.user}'@'{host}' IDENTIFIED BY %s", (password,)
        )
        server.query(f"GRANT ALL ON `{target.database}`.* TO '{target.user}'@'{host}'")


# Users made per statement: one CREATE USER names many (MySQL and MariaDB both take a list).
USERS_PER_STATEMENT = 200


def create_first_login_users(
    server: SandboxServer, name: str, count: int, password: str, hosts: tuple[str, ...]
) -> None:
    """`count` users name0 … name<count-1>, each with `password`, allowed from each client
    address, with no privilege (their connections only run SELECT 1): the first logins'
    users (measure_connloop with `users`)."""
    accounts = [(f"{name}{i}", host) for i in range(count) for host in hosts]
    for start in range(0, len(accounts), USERS_PER_STATEMENT):
        batch = accounts[start : start + USERS_PER_STATEMENT]
        listed = ", ".join(f"'{user}'@'{host}' IDENTIFIED BY %s" for user, host in batch)
        server.query(f"CREATE USER IF NOT EXISTS {listed}", tuple(password for _ in batch))


def sysbench_args(
    target: Connection,
    *,
    ssl: bool,
    threads: int,
    time_s: int,
    events: int = 0,
    proof: bool = False,
) -> list[str]:
    """sysbench running connect.lua over TCP; with `proof`, one connection that prints the
    server's view of its TLS session."""
    options = ["--proof=on"] if proof else []
    return sysbench.command(
        target, str(LUA_SCRIPT), threads=threads, time_s=time_s, events=events, tls=ssl,
        options=options,
    )  # fmt: skip


def run_tcp(
    target: Connection,
    *,
    ssl: bool,
    threads: int,
    time_s: int,
    workdir: Path,
    password: str,
    log: Path,
    script: str = str(LUA_SCRIPT),
    extra: Sequence[str] = (),
    prefix: Sequence[str] = (),
) -> sysbench.SysbenchResult:
    """sysbench over TCP as the password user: connect.lua by default, or a stock script
    (oltp_point_select) with its `extra` options (--tables, --table-size).  workdir is its
    cwd: with TLS it reads the client PEM files there (servers/pki.SYSBENCH_FILES)."""
    return sysbench.run(sysbench.invocation(
        target, script, threads=threads, time_s=time_s, log=log, options=extra, tls=ssl,
        env=tls.client_env(password), workdir=workdir, prefix=prefix,
    ))  # fmt: skip


def measure(
    target: Connection,
    *,
    ssl: bool,
    threads: int,
    time_s: int,
    workdir: Path,
    password: str,
    log: Path,
    prefix: Sequence[str] = (),
) -> ConnRate:
    report = run_tcp(
        target,
        ssl=ssl,
        threads=threads,
        time_s=time_s,
        workdir=workdir,
        password=password,
        log=log,
        prefix=prefix,
    )
    return ConnRate(
        client="sysbench",
        ssl=ssl,
        threads=report.threads,
        connections=report.transactions,
        seconds=report.total_time_s,
        per_s=report.tps,
        errors=report.ignored_errors,
    )


def sysbench_session(
    target: Connection,
    *,
    ssl: bool,
    workdir: Path,
    password: str,
    log: Path,
    prefix: Sequence[str] = (),
) -> tls.SessionTls:
    """The server's view of one connection made exactly as measure() makes them."""
    argv = sysbench_args(target, ssl=ssl, threads=1, time_s=0, events=1, proof=True)
    out = sysbench.execute(
        argv, phase="sysbench connect.lua", log=log, timeout_s=60,
        env=tls.client_env(password), workdir=workdir, prefix=prefix,
    )  # fmt: skip
    return tls.parse_session(out)


def build_connloop(out_dir: Path) -> Path:
    cc = proc.which("cc")
    config = proc.which("mariadb_config")
    if cc is None or config is None:
        raise BadInput(f"cannot build connloop: {CC_HINT}")
    flags = proc.run([config, "--cflags", "--libs"], phase="mariadb_config", timeout_s=30)
    binary = out_dir / "connloop"
    proc.run(
        [cc, "-O2", "-o", str(binary), str(C_SOURCE), *flags.stdout.split(), "-lpthread"],
        phase="build connloop",
        timeout_s=120,
        hint=CC_HINT,
    )
    return binary


_CONNLOOP = re.compile(r"connections=(\d+) seconds=([\d.]+) rate=([\d.]+) errors=(\d+)")


def parse_connloop(text: str, *, ssl: bool, threads: int) -> ConnRate:
    match = _CONNLOOP.search(text)
    if match is None:
        raise ToolError("connloop printed no result line", phase="parse connloop", tail=text[-500:])
    return ConnRate(
        client="connloop",
        ssl=ssl,
        threads=threads,
        connections=int(match[1]),
        seconds=float(match[2]),
        per_s=float(match[3]),
        errors=int(match[4]),
    )


def measure_connloop(
    binary: Path,
    target: Connection,
    *,
    ssl: bool,
    threads: int,
    time_s: float,
    workdir: Path,
    password: str,
    log: Path,
    users: int = 0,
    prefix: Sequence[str] = (),
) -> ConnRate:
    """connloop's rate; with `users`, each connection logs in once as its own user (named
    target.user + its number: first_login_users), to no database."""
    database = "" if users else target.database
    argv = [*prefix, str(binary), target.host, str(target.port), target.user, database]
    argv += [str(time_s), str(threads), "1" if ssl else "0"]
    argv += [str(users)] if users else []
    out = proc.run(
        argv,
        phase="connloop",
        timeout_s=time_s + 60,
        cwd=workdir,
        stdout_path=log,
        env=tls.client_env(password),
    ).stdout
    return parse_connloop(out, ssl=ssl, threads=threads)
