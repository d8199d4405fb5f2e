"""A throwaway MariaDB server in a private directory: the embedded default of encbench.

Lifecycle, after mirakuru/pytest-mysql: pre-start checks (binaries, port, socket path) →
mariadb-install-db → mariadbd in its own process group → readiness probe (socket + SELECT 1)
with a timeout → stop: SHUTDOWN, then SIGTERM to the group, then SIGKILL, each with a timeout.
Start errors carry the tail of the server's error log.  It never reads or writes
/var/lib/mysql or a system server's socket: every path comes from the sandbox directory.
"""

from __future__ import annotations

import contextlib
import getpass
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pymysql

from encbench import proc
from encbench.errors import BadInput, ToolError
from encbench.servers import registry
from encbench.servers.variants import SandboxPaths, render_cnf

INSTALL_HINT = "install it: apt-get install mariadb-server (or run `make setup`)"
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; keep a margin


def find_binary(name: str) -> str:
    found = proc.which(name)
    if found is None:
        raise BadInput(f"{name} not found: {INSTALL_HINT}")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SandboxServer:
    """One mariadbd on a private data directory, a unix socket and a free loopback port."""

    def __init__(
        self,
        name: str,
        root: Path,
        *,
        database: str = "sbtest",
        launch_prefix: Sequence[str] = (),
    ) -> None:
        self.name = name
        # e.g. netns.exec_prefix(ns): the server then listens in that namespace (the harness
        # still reaches it through its unix socket, which namespaces do not separate).
        self.launch_prefix = list(launch_prefix)
        self.root = root
        self.database = database
        self.socket_dir = Path(tempfile.mkdtemp(prefix="encbench-"))
        self.paths = SandboxPaths(
            datadir=root / "data",
            tmpdir=root / "tmp",
            socket=self.socket_dir / f"{name}.sock",
            pid_file=root / "mariadbd.pid",
            error_log=root / "error.log",
        )
        if len(str(self.paths.socket)) > SOCKET_PATH_MAX:
            raise BadInput(f"socket path {self.paths.socket} is too long; set TMPDIR shorter")
        self.defaults_file = root / "my.cnf"
        self.port = free_port()
        self.user = getpass.getuser()
        self.process: subprocess.Popen[bytes] | None = None
        self.options: dict[str, str] = {}
        self._entry: registry.Entry | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def initialize(self, options: dict[str, str]) -> None:
        """Create the data directory with the same options the server will run with, so the
        system tablespace and logs are born encrypted in the encrypted variant."""
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / registry.SANDBOX_MARKER).write_text("created by encbench; safe to delete\n")
        self.paths.tmpdir.mkdir(exist_ok=True)
        self._write_options(options)
        install_db = find_binary("mariadb-install-db")
        find_binary("mariadbd")
        proc.run(
            [
                install_db,
                f"--defaults-file={self.defaults_file}",
                f"--datadir={self.paths.datadir}",
                "--auth-root-authentication-method=socket",
                f"--auth-root-socket-user={self.user}",
                "--skip-test-db",
            ],
            phase=f"initialize {self.name} server",
            timeout_s=300,
            stdout_path=self.root / "install-db.log",
            hint=f"its output is in {self.root / 'install-db.log'}",
        )

    def _write_options(self, options: dict[str, str]) -> None:
        self.options = dict(options)
        self.defaults_file.write_text(render_cnf(options))

    def start(self, options: dict[str, str], timeout_s: float = 120) -> None:
        if self.process is not None:
            raise RuntimeError(f"{self.name} server is already running")
        self._write_options(options)
        self.paths.error_log.touch()
        log_offset = self.paths.error_log.stat().st_size
        self.process = subprocess.Popen(
            [*self.launch_prefix, find_binary("mariadbd"), f"--defaults-file={self.defaults_file}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=proc.child_env(),
            start_new_session=True,
        )
        self._entry = registry.Entry.new(
            self.name, self.process.pid, self.root, self.socket_dir, self.defaults_file
        )
        registry.register(self._entry)
        try:
            self._wait_ready(timeout_s, log_offset)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout_s: float, log_offset: int) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        last_error = ""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ToolError(
                    f"{self.name} server exited during start-up",
                    returncode=self.process.returncode,
                    phase="start server",
                    tail=self._log_since(log_offset),
                    hint=f"see {self.paths.error_log}",
                )
            if self.paths.socket.exists():
                try:
                    with self.connect() as conn, conn.cursor() as cur:
                        cur.execute("SELECT 1")
                        return
                except pymysql.MySQLError as exc:
                    last_error = str(exc)
            time.sleep(0.1)
        raise ToolError(
            f"{self.name} server not ready within {timeout_s:.0f} s ({last_error})",
            phase="start server",
            tail=self._log_since(log_offset),
            hint=f"see {self.paths.error_log}",
        )

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.paths.error_log, errors="replace") as f:
                f.seek(offset)
                return "\n".join(f.read().splitlines()[-15:])
        except OSError:
            return ""

    def stop(self, timeout_s: float = 60) -> None:
        """Clean shutdown, then SIGTERM to the group, then SIGKILL; never raises."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            with (
                contextlib.suppress(pymysql.MySQLError, OSError),
                self.connect(timeout_s=5) as conn,
                conn.cursor() as cur,
            ):
                cur.execute("SHUTDOWN")
        proc.stop_group(
            process, ((None, timeout_s), (signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0))
        )
        if self._entry is not None:
            registry.unregister(self._entry)
            self._entry = None

    def restart(self, options: dict[str, str]) -> None:
        self.stop()
        self.start(options)

    def destroy(self, keep_log_in: Path | None = None) -> None:
        """Stop and delete the sandbox; its error log is copied out first for the record."""
        self.stop()
        if keep_log_in is not None:
            keep_log_in.mkdir(parents=True, exist_ok=True)
            for log in (self.paths.error_log, self.root / "install-db.log"):
                if log.exists():
                    shutil.copy(log, keep_log_in / f"{self.name}-{log.name}")
        registry.remove_sandbox_files(self.root, self.socket_dir)

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} server is not running")
        return self.process.pid

    # -- SQL -------------------------------------------------------------------------------
    def connect(self, timeout_s: float = 10, database: str | None = None) -> Any:
        return pymysql.connect(
            unix_socket=str(self.paths.socket),
            user=self.user,
            database=database,
            connect_timeout=int(timeout_s),
            autocommit=True,
            # PyMySQL negotiates TLS whenever the server offers it, even over the socket: the
            # harness's own status reads must not be TLS handshakes on a server under study.
            ssl_disabled=True,
        )

    @contextlib.contextmanager
    def cursor(self, database: str | None = None) -> Iterator[Any]:
        with self.connect(database=database) as conn, conn.cursor() as cur:
            yield cur

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        with self.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def global_status(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.query("SHOW GLOBAL STATUS")}

    def version(self) -> str:
        return str(self.query("SELECT VERSION()")[0][0])
