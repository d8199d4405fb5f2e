"""What a sandboxed server of any kind needs of this machine: a path its programs read as
written (check_path), a port it can keep for its life (free_port), the wait until it answers
(wait_ready), and the size of its files (tree_bytes)."""

from __future__ import annotations

import random
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.errors import BadInput, ToolError


def _path_problem(char: str) -> str | None:
    """Why `char` cannot be in a sandbox or run directory, or None if it can.  Measured
    against the real programs (tests/servers/test_option_files.py): my.cnf takes any character
    quoted (servers/mariadb/options.cnf_value), sshd_config too (tunnels.sshd_quote),
    stunnel.conf takes a value verbatim up to the end of the line; but no option file can carry
    a line break, and mariadb-install-db, a shell script, passes the defaults file and the error
    log unquoted (`$defaults`, `$args`), so whitespace splits them into two arguments."""
    if char in "\n\r":
        return "cannot be written in the option files of mariadbd, sshd and stunnel"
    if char.isspace():
        return "cannot be passed to mariadb-install-db, which splits paths at whitespace"
    if not char.isprintable():
        return "(a control character) cannot be written in an option file"
    return None


def check_path(path: Path, what: str = "results directory") -> None:
    """Refuse a directory whose path mariadbd, mariadb-install-db, stunnel or sshd would read
    differently from what encbench wrote; call it before creating the directory."""
    text = str(path.absolute())
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(
            f"{what} {text!r}: a path that is not UTF-8 cannot be written in an option file; "
            "choose a path without it"
        ) from None
    for char in text:
        problem = _path_problem(char)
        if problem is not None:
            raise BadInput(f"{what} {text!r}: {char!r} {problem}; choose a path without it")


# Where a sandbox server's port is drawn from: below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range, 32768-60999 by default).  A server keeps its port for its
# whole life and is restarted on it; a port in that range may meanwhile be given to any
# outgoing connection as its local port (a client's, another run's), and the server's next
# start then fails to bind it (seen under the tests' parallel runs: error 98).
SERVER_PORTS = range(20000, 32768)
LOCAL_PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port() -> int:
    """A free port for a server's life, outside the ephemeral range where one is (else any
    free port)."""
    try:
        low = int(LOCAL_PORT_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = SERVER_PORTS.stop
    ports = range(SERVER_PORTS.start, min(SERVER_PORTS.stop, low))
    for port in random.sample(ports, min(len(ports), 50)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(
    process: subprocess.Popen[Any],
    name: str,
    answers: Callable[[], str | None],
    timeout_s: float,
    log_tail: Callable[[], str],
    log: Path,
    poll_s: float = 0.1,
) -> None:
    """Wait, probing every poll_s, until a starting server answers: `answers()` is None once
    it does, else why not ("" before it can be asked), which names the last failure if the
    time runs out.  A server that exits first raises with its exit status and its log's tail
    (MariaDB's sandbox and PostgreSQL's share this; each has its own probe and log)."""
    deadline = time.monotonic() + timeout_s
    last_error = ""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ToolError(
                f"{name} server exited during start-up",
                returncode=process.returncode,
                phase="start server",
                tail=log_tail(),
                hint=f"see {log}",
            )
        why = answers()
        if why is None:
            return
        last_error = why or last_error
        time.sleep(poll_s)
    raise ToolError(
        f"{name} server not ready within {timeout_s:.0f} s ({last_error})",
        phase="start server",
        tail=log_tail(),
        hint=f"see {log}",
    )


def tree_bytes(path: Path) -> int:
    """The bytes of every file below path (a data directory, a backup)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
