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
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pymysql

from encbench import proc, stopping
from encbench.errors import BadInput, ServerError
from encbench.servers import cgroup, keys, registry, shapes
from encbench.servers.local import check_path, free_port, wait_ready
from encbench.servers.mariadb import SERVER_STOP, STARTING_STOP
from encbench.servers.mariadb.installs import HOST, ServerInstall
from encbench.servers.mariadb.options import SandboxPaths, render_cnf
from encbench.servers.mariadb.queries import Queries
from encbench.servers.target import Connection

SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; keep a margin
# During a stop, how long a clean SHUTDOWN is waited for before SIGTERM (it takes about a
# second; one that hangs must not hold the stop for the minute an ordinary restart allows).
STOPPING_SHUTDOWN_S = 10.0
CONNECT_TIMEOUT_S = 10.0
# Every read and write of the harness's own connections has a timeout, so that a server that
# hangs ends the run with its name instead of hanging it.  A statement may scan a whole table
# (the in-memory preload, a bulk-load chunk): generous for those, short for status reads.
QUERY_TIMEOUT_S = 600.0
STATUS_TIMEOUT_S = 60.0
# After a lost connection, how long a server that is going away gets to become reapable: the
# kernel closes a killed process's sockets just before its exit status can be collected.
EXIT_GRACE_S = 2.0
SERVER_GOING_AWAY = frozenset({1053, 1927})  # ER_SERVER_SHUTDOWN, ER_CONNECTION_KILLED


def _timed_out(exc: BaseException) -> bool:
    """PyMySQL reports a socket timeout as an OperationalError; the timeout is in its chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TimeoutError) or isinstance(
            getattr(seen, "original_exception", None), TimeoutError
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _exit_status(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return f"exit {returncode}"


class SandboxServer(Queries):
    """One mariadbd on a private data directory, a unix socket and a free loopback port."""

    def __init__(
        self,
        name: str,
        root: Path,
        *,
        database: str = "sbtest",
        launch_prefix: Sequence[str] = (),
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        use_cgroup: bool = True,
        install: ServerInstall = HOST,
        keyring: Path | None = None,
    ) -> None:
        root = root.absolute()
        check_path(root, "sandbox directory")
        self.name = name
        self.connect_timeout_s = connect_timeout_s
        self.query_timeout_s = query_timeout_s
        self.status_timeout_s = min(STATUS_TIMEOUT_S, query_timeout_s)
        # e.g. netns.exec_prefix(ns): the server then listens in that namespace (the harness
        # still reaches it through its unix socket, which namespaces do not separate).
        self.launch_prefix = list(launch_prefix)
        # This host's MariaDB, or a newer release's from a private root (installs.py).
        self.install = install
        # A MySQL server's keyring file, where its options encrypt (default_table_encryption).
        self.keyring = keyring
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
        # The account encbench and sysbench log in as, over the socket without a password:
        # MariaDB's root by unix_socket as the OS user; MySQL's root@localhost, which
        # --initialize-insecure makes with an empty password (reached by the socket only).
        self.login = "root" if install.mysql else self.user
        self.process: subprocess.Popen[bytes] | None = None
        self.options: dict[str, str] = {}
        # Option groups beside [mariadbd] in the same file (a Galera node's [sst]).
        self.sections: dict[str, dict[str, str]] = {}
        self._entry: registry.Entry | None = None
        self._answered = False  # the running server has answered since its start
        # The server's own cgroup (servers/cgroup.py) while it runs, where one can be made.
        self.use_cgroup = use_cgroup
        self.cgroup: cgroup.CountingGroup | None = None
        # An instance shape (servers/shapes.py) for the next start: the server then starts
        # inside its shaped group; None starts it unconfined.
        self.shape: tuple[shapes.Layout, shapes.Limits] | None = None
        self.shaped: shapes.ShapedGroup | None = None  # the running server's, if shaped

    # -- lifecycle -------------------------------------------------------------------------
    def initialize(self, options: dict[str, str], *, install_db: bool = True) -> None:
        """Create the data directory with the same options the server will run with, so the
        system tablespace and logs are born encrypted in the encrypted variant.  Without
        install_db the data directory is left empty: a Galera joiner's comes by state
        transfer from its donor."""
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / registry.SANDBOX_MARKER).write_text("created by encbench; safe to delete\n")
        self.paths.tmpdir.mkdir(exist_ok=True)
        # MySQL makes its data directory without its logs' encryption (installs.py), which
        # the full options turn on when it starts.
        self._write_options(self.install.initialize_options(options))
        if not install_db:
            self._write_options(options)
            self.paths.datadir.mkdir(exist_ok=True)
            return
        argv = self.install.initialize(self.defaults_file, self.paths.datadir, self.user)
        self.install.program(self.install.server_program)
        proc.run(
            argv,
            phase=f"initialize {self.name} server",
            timeout_s=300,
            stdout_path=self.root / "install-db.log",
            hint=f"its output is in {self.root / 'install-db.log'}",
        )
        if self.install.mysql and "default_table_encryption" in options:
            assert self.keyring is not None, "an encrypting MySQL sandbox needs its keyring"
            self.install.write_keyring(self.paths.datadir, self.keyring)
        self._write_options(options)

    def _write_options(self, options: dict[str, str]) -> None:
        self.options = dict(options)
        # The install's own (a root's basedir) first: its plugins and messages, not the host's.
        files = self.root / "files"  # MySQL's secure_file_priv
        if self.install.mysql:
            files.mkdir(parents=True, exist_ok=True)
        # Private (0600): its options may hold a secret (a key server's token); the server
        # and every program that reads the file run as this process's user.
        keys.write_secret(
            self.defaults_file,
            render_cnf(
                {**self.install.options(files), **options},
                self.sections,
                group=self.install.server_program,
            ),
        )

    def set_sections(self, sections: dict[str, dict[str, str]]) -> None:
        """Rewrite the option groups beside [mariadbd]; no restart: the programs that read
        them (the SST scripts) read the file each time they start."""
        self.sections = {group: dict(values) for group, values in sections.items()}
        self._write_options(self.options)

    def start(
        self,
        options: dict[str, str],
        timeout_s: float = 120,
        poll_s: float = 0.1,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Start and wait until `SELECT 1` answers, probing every poll_s (a timed start-up
        probes often, so that the probe's period does not hide in its time).  `env` adds to
        the server's environment, which the programs it starts inherit (a Galera node's SST
        scripts and their socat, e.g. OPENSSL_ia32cap)."""
        if self.process is not None:
            raise RuntimeError(f"{self.name} server is already running")
        self._write_options(options)
        self.paths.error_log.touch()
        log_offset = self.paths.error_log.stat().st_size
        # A server killed outright leaves its socket file behind, and the probe would then
        # try to connect every poll_s through the whole start (about 1 ms of encbench's CPU
        # each: a timed crash recovery cost the harness a tenth of a core).  The file is this
        # sandbox's own, no server of it runs, and mariadbd binds the path afresh anyway.
        self.paths.socket.unlink(missing_ok=True)
        shaped: shapes.ShapedGroup | None = None
        try:
            # The server, its record and its group are one step: a stop that comes meanwhile
            # is raised once stop() below knows all three.
            with stopping.held():
                shaped, enter = self._shaped_group()
                # Known to stop() at once: a failure between here and the server's start
                # must not leave the group.
                self.cgroup = self.shaped = shaped
                self.process = proc.start_streams(
                    [
                        *self.launch_prefix,
                        *enter,
                        self.install.program(self.install.server_program),
                        f"--defaults-file={self.defaults_file}",
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
                self._entry = registry.Entry.new(
                    self.name, self.process.pid, self.root, self.socket_dir, self.defaults_file
                )
                registry.register(self._entry)
                if shaped is None and self.use_cgroup:
                    # Right after the start: threads born before the move go along with it.
                    self.cgroup = cgroup.for_server(self.name, self.process.pid)
            self._answered = False
            self._wait_ready(timeout_s, log_offset, poll_s)
            self._answered = True
        except BaseException:
            if self.process is None and shaped is not None:
                shaped.remove(wait_s=0)
                self.cgroup = self.shaped = None
            self.stop()
            raise

    def _shaped_group(self) -> tuple[shapes.ShapedGroup | None, list[str]]:
        """The shaped group the next start enters (made now, before the server exists), and
        the launcher that enters it; none without a shape."""
        if self.shape is None:
            return None, []
        layout, limits = self.shape
        group = shapes.ShapedGroup(layout, self.name, limits)
        group.create()
        return group, group.launcher(self.paths.error_log)

    def _wait_ready(self, timeout_s: float, log_offset: int, poll_s: float = 0.1) -> None:
        assert self.process is not None
        wait_ready(
            self.process,
            self.name,
            self._answers,
            timeout_s,
            lambda: self._log_since(log_offset),
            self.paths.error_log,
            poll_s,
        )

    def _answers(self) -> str | None:
        """None once `SELECT 1` answers over the socket; else why not ("" while there is no
        socket to ask)."""
        if not self.paths.socket.exists():
            return ""
        try:
            with (
                self._open(None, read_timeout_s=STATUS_TIMEOUT_S) as conn,
                conn.cursor() as cur,
            ):
                cur.execute("SELECT 1")
            return None
        except pymysql.MySQLError as exc:
            return str(exc)

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.paths.error_log, errors="replace") as f:
                f.seek(offset)
                return "\n".join(f.read().splitlines()[-15:])
        except OSError:
            return ""

    @stopping.whole
    def stop(self, timeout_s: float = 60) -> None:
        """Clean shutdown, then SIGTERM to the group, then SIGKILL; never raises.  A server
        that does not take the SHUTDOWN (it hangs, or is gone) is not waited for.  A stop
        asked for meanwhile is raised once this one is whole (its group and record gone);
        during a stop, a SHUTDOWN is waited for less long (the sandbox goes next)."""
        process, self.process = self.process, None
        if process is None:
            return
        if not self._answered:  # stopped during its start (a stop, a start that failed)
            proc.stop_group(process, STARTING_STOP)
        else:
            shutting_down = process.poll() is None and self._send_shutdown()
            if stopping.requested():
                timeout_s = min(timeout_s, STOPPING_SHUTDOWN_S)
            waits: tuple[tuple[int | None, float], ...] = (
                ((None, timeout_s),) if shutting_down else ()
            )
            proc.stop_group(process, (*waits, *SERVER_STOP))
        self._answered = False
        if self.cgroup is not None:
            # A child that made a process group of its own (a Galera node's SST script runs
            # socat under GNU timeout, which does) escaped the group stop, not the cgroup:
            # ended here by pid, so nothing the server started outlives it.
            proc.kill_pids(self.cgroup.members())
            # A group the kernel will not remove yet keeps its record for `encbench clean`.
            self.cgroup.remove()
            self.cgroup = self.shaped = None
        if self._entry is not None:
            registry.unregister(self._entry)
            self._entry = None

    def restart(self, options: dict[str, str]) -> None:
        self.stop()
        self.start(options)

    @stopping.whole
    def destroy(self, keep_log_in: Path | None = None) -> None:
        """Stop and delete the sandbox; its error log is copied out first for the record.  A
        stop asked for meanwhile is raised once the sandbox is gone."""
        self.stop()
        if keep_log_in is not None:
            keep_log_in.mkdir(parents=True, exist_ok=True)
            for log in (self.paths.error_log, self.root / "install-db.log"):
                # Best effort: a log that cannot be read (its filesystem's key already gone
                # after a failure) must not keep the sandbox, or what is below it, in place.
                with contextlib.suppress(OSError):
                    if log.exists():
                        shutil.copy(log, keep_log_in / f"{self.name}-{log.name}")
        registry.remove_sandbox_files(self.root, self.socket_dir)

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} server is not running")
        return self.process.pid

    @property
    def cpu_counter(self) -> cgroup.CpuCounter:
        """Where this server's CPU is read: its cgroup, or /proc/PID/stat without one."""
        if self.cgroup is not None:
            return self.cgroup.counter
        return cgroup.proc_stat_counter(self.pid)

    def cpu_seconds(self) -> float:
        return self.cpu_counter.read_s()

    # -- as a Target (servers/target.py): a sandbox has every capability -------------------
    @property
    def datadir(self) -> Path:
        return self.paths.datadir

    def endpoint(self) -> Connection:
        """Over the unix socket, as the OS user: no password anywhere."""
        return Connection.unix(self.paths.socket, self.login, self.database)

    # -- SQL -------------------------------------------------------------------------------
    def _open(
        self, database: str | None, *, read_timeout_s: float, connect_timeout_s: float = 0
    ) -> Any:
        """A raw PyMySQL connection (its errors are PyMySQL's); the greeting, every read and
        every write wait at most read_timeout_s."""
        return pymysql.connect(
            unix_socket=str(self.paths.socket),
            user=self.login,
            database=database,
            connect_timeout=connect_timeout_s or self.connect_timeout_s,
            read_timeout=read_timeout_s,
            write_timeout=read_timeout_s,
            autocommit=True,
            # PyMySQL negotiates TLS whenever the server offers it, even over the socket: the
            # harness's own status reads must not be TLS handshakes on a server under study.
            ssl_disabled=True,
        )

    def _send_shutdown(self) -> bool:
        try:
            with self._open(None, read_timeout_s=5, connect_timeout_s=5) as conn:
                with conn.cursor() as cur:
                    cur.execute("SHUTDOWN")
                return True
        except (pymysql.MySQLError, OSError):
            return False

    @contextlib.contextmanager
    def _failures_named(self, timeout_s: float) -> Iterator[None]:
        try:
            yield
        except pymysql.MySQLError as exc:
            raise self._failure(exc, timeout_s) from exc

    def connect(
        self,
        timeout_s: float | None = None,
        database: str | None = None,
        *,
        read_timeout_s: float | None = None,
    ) -> Any:
        """A connection with connect, read and write timeouts; failing to connect raises a
        ServerError that names this server and says whether it died or hangs.  (Errors of
        statements run on the connection are PyMySQL's: use cursor() or query() to have
        them named too.)"""
        read_timeout = read_timeout_s or self.query_timeout_s
        with self._failures_named(read_timeout):
            return self._open(
                database, read_timeout_s=read_timeout, connect_timeout_s=timeout_s or 0
            )

    @contextlib.contextmanager
    def cursor(self, database: str | None = None, timeout_s: float | None = None) -> Iterator[Any]:
        """A cursor on a new connection; any PyMySQL error inside the block becomes one
        ServerError naming this server (died, did not answer within timeout_s, refused)."""
        read_timeout = timeout_s or self.query_timeout_s
        with (
            self._failures_named(read_timeout),
            self._open(database, read_timeout_s=read_timeout) as conn,
            conn.cursor() as cur,
        ):
            yield cur

    # -- health ------------------------------------------------------------------------------
    def check_alive(self, timeout_s: float | None = None) -> None:
        """Raise the ServerError that explains a client's failure (sysbench's "lost
        connection"): the server died (its exit status and the end of its log), or it does not
        answer `SELECT 1` within timeout_s (default: the status timeout).  Returns quietly
        when it is well."""
        if self.process is None:
            raise ServerError(f"the {self.name} server is not running", tail=self._log_tail())
        if self.process.poll() is not None:
            raise self._died(self.process)
        self.query("SELECT 1", timeout_s=timeout_s or self.status_timeout_s)

    def _failure(self, exc: pymysql.MySQLError, timeout_s: float) -> ServerError:
        process = self.process
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        # Codes below 2000 are the server's own answer: it is alive and refused the statement
        # (but for "shutdown in progress" and "connection was killed": it is going away).
        if code is not None and code < 2000 and code not in SERVER_GOING_AWAY:
            return ServerError(
                f"the {self.name} server refused a statement: {exc.args[-1]} (error {code})",
                tail=self._log_tail(),
            )
        if process is None:
            return ServerError(f"the {self.name} server is not running ({exc})")
        timed_out = _timed_out(exc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0 if timed_out else EXIT_GRACE_S)
        if process.returncode is not None:
            return self._died(process)
        if timed_out:
            return ServerError(
                f"the {self.name} server (pid {process.pid}) did not answer within {timeout_s:g} s",
                tail=self._log_tail(),
                hint=f"its error log: {self.paths.error_log}",
            )
        return ServerError(
            f"the {self.name} server (pid {process.pid}) lost the connection: {exc.args[-1]}",
            tail=self._log_tail(),
            hint=f"its error log: {self.paths.error_log}",
        )

    def _died(self, process: subprocess.Popen[bytes]) -> ServerError:
        tail = self._log_tail()
        last = tail.splitlines()[-1].strip() if tail else "(nothing)"
        return ServerError(
            f"the {self.name} server (pid {process.pid}) died "
            f"({_exit_status(process.returncode)}): its log ends: {last}",
            tail=tail,
        )

    def _log_tail(self) -> str:
        return "\n".join(line for line in proc.tail(self.paths.error_log).splitlines() if line)

    def version(self) -> str:
        return str(self.query("SELECT VERSION()")[0][0])
