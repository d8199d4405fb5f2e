"""Connection setup rate: sysbench running connect.lua (connect, SELECT 1, disconnect per
event, so events/s = connections/s), over TCP with --mysql-ssl=on|off; and connloop.c, a
plain C client, only to check that the Lua client is not what limits the rate.

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
from encbench.proof import tls
from encbench.servers.sandbox import SandboxServer
from encbench.workloads import sysbench

LUA_SCRIPT = Path(__file__).parent / "lua" / "connect.lua"
C_SOURCE = Path(__file__).with_name("connloop.c")
CC_HINT = "install a C compiler and the client headers: apt-get install gcc libmariadb-dev"


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    user: str
    database: str


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
    server: SandboxServer, target: Target, password: str, hosts: tuple[str, ...]
) -> None:
    """A password user for TCP clients, allowed only from the given client addresses."""
    for host in hosts:
        server.query(
            f"CREATE USER IF NOT EXISTS '{target.user}'@'{host}' IDENTIFIED BY %s", (password,)
        )
        server.query(f"GRANT ALL ON `{target.database}`.* TO '{target.user}'@'{host}'")


def sysbench_args(
    target: Target,
    *,
    ssl: bool,
    threads: int,
    time_s: int,
    events: int = 0,
    proof: bool = False,
    script: str = str(LUA_SCRIPT),
    extra: Sequence[str] = (),
) -> list[str]:
    """sysbench over TCP: connect.lua by default, or a stock script (oltp_point_select) with
    its `extra` options (--tables, --table-size)."""
    if threads <= 0 or time_s < 0 or events < 0:
        raise BadInput(
            f"threads must be > 0 and time/events ≥ 0 (got {threads}, {time_s}, {events})"
        )
    argv = [
        "sysbench",
        "--db-driver=mysql",
        f"--mysql-host={target.host}",
        f"--mysql-port={target.port}",
        f"--mysql-user={target.user}",
        f"--mysql-db={target.database}",
        f"--mysql-ssl={'on' if ssl else 'off'}",
        f"--threads={threads}",
        f"--time={time_s}",
        f"--events={events}",
        "--percentile=95",
        *extra,
        script,
    ]
    if proof:
        argv.insert(-1, "--proof=on")
    return [*argv, "run"]


def _run_sysbench(
    argv: list[str],
    workdir: Path,
    password: str,
    log: Path,
    timeout_s: float,
    prefix: Sequence[str] = (),
) -> str:
    """workdir is sysbench's cwd: with --mysql-ssl=on it reads the client PEM files there.
    `prefix` (netns.exec_prefix) runs it on another emulated host."""
    result = proc.run(
        [*prefix, *argv],
        phase="sysbench connect.lua",
        timeout_s=timeout_s,
        cwd=workdir,
        stdout_path=log,
        env=tls.client_env(password),
        hint=sysbench.INSTALL_HINT,
        check=False,
    )
    if result.returncode != 0:
        raise ToolError(
            "sysbench failed",
            argv=argv,
            returncode=result.returncode,
            phase="sysbench connect.lua",
            tail=proc.tail(log),
        )
    return result.stdout


def run_tcp(
    target: Target,
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
    argv = sysbench_args(
        target, ssl=ssl, threads=threads, time_s=time_s, script=script, extra=extra
    )
    return sysbench.parse_report(_run_sysbench(argv, workdir, password, log, time_s + 120, prefix))


def measure(
    target: Target,
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
    target: Target,
    *,
    ssl: bool,
    workdir: Path,
    password: str,
    log: Path,
    prefix: Sequence[str] = (),
) -> tls.SessionTls:
    """The server's view of one connection made exactly as measure() makes them."""
    argv = sysbench_args(target, ssl=ssl, threads=1, time_s=0, events=1, proof=True)
    return tls.parse_session(_run_sysbench(argv, workdir, password, log, 60, prefix))


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
    target: Target,
    *,
    ssl: bool,
    threads: int,
    time_s: float,
    workdir: Path,
    password: str,
    log: Path,
) -> ConnRate:
    argv = [str(binary), target.host, str(target.port), target.user, target.database]
    argv += [str(time_s), str(threads), "1" if ssl else "0"]
    out = proc.run(
        argv,
        phase="connloop",
        timeout_s=time_s + 60,
        cwd=workdir,
        stdout_path=log,
        env=tls.client_env(password),
    ).stdout
    return parse_connloop(out, ssl=ssl, threads=threads)
