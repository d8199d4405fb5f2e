"""A throwaway PostgreSQL server in a private directory, as servers/mariadb/sandbox.py is for
MariaDB.

Lifecycle: initdb into a data directory of the sandbox (0700, owned by the user the server
runs as) → `postgres -D DATA -c …` in its own process group, every setting on its command
line (none is secret), listening on a free loopback port and on a private unix socket
directory → readiness (postmaster.pid says "ready", then `SELECT 1` over the socket) →
stop: `pg_ctl stop -m fast`, then `-m immediate`, then SIGKILL to its process group.  It
never reads or writes a system cluster's files or socket: every path comes from the sandbox.

PostgreSQL refuses to run as root.  Run by root, encbench starts every server program
(initdb, postgres, pg_ctl) as the `postgres` user that Debian's package creates, through
`setpriv` (which execs the program itself: the server's pid is the one encbench started, and
what `encbench clean` finds by its command line).  The harness's own clients (psql, pgbench)
run as the harness's user; root reaches the private socket directory, another user owns it.

The harness connects as an administrator role over the unix socket (`trust`: only the
socket directory's owner, and root, can reach it).  The benchmark role connects over TCP
with a password (SCRAM); the server is given only its SCRAM verifier, made here, so the
password never reaches a statement, a log or a command line.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import hmac
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput, EncbenchError, ServerError, ToolError
from encbench.machine.checks import Check
from encbench.servers import cgroup, keys, postgresql, registry, shapes
from encbench.servers.local import check_path, free_port, wait_ready
from encbench.servers.pki import Pki
from encbench.servers.postgresql import PACKAGE, PROGRAMS, bindir, client
from encbench.servers.sizing import SERVER_MAX_CONNECTIONS

INSTALL_HINT = f"install it: apt-get install {PACKAGE} (or scripts/setup-test-extras.sh)"
CLIENT_PROGRAMS = ("pgbench", "psql")
SERVER_OS_USER = "postgres"
ADMIN = "encbench_admin"
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; keep a margin (the socket is .s.PGSQL.PORT)
STATUS_TIMEOUT_S = 60.0
SCRAM_ITERATIONS = 4096  # PostgreSQL's own default (scram_iterations)
# What initdb and the server are told once, whatever the study: the server's own log of
# every connection ("connection authorized: … SSL enabled (protocol=…, cipher=…, bits=…)")
# is the per-run proof of what each connection was.
BASE_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "max_connections": str(SERVER_MAX_CONNECTIONS),
    "log_connections": "on",
    "logging_collector": "off",
    "log_destination": "stderr",
}


# -- the programs ---------------------------------------------------------------------------
def program(name: str) -> str:
    """A PostgreSQL program of bindir(); a client (psql, pgbench) is also found on PATH,
    where postgresql-client alone puts it: a target needs no server programs here."""
    found = bindir()
    if found is None:
        on_path = proc.which(name) if name in CLIENT_PROGRAMS else None
        if on_path is not None:
            return on_path
        raise BadInput(f"PostgreSQL's {name} not found: {INSTALL_HINT}")
    return str(found / name)


# -- the user the server runs as -------------------------------------------------------------
@dataclass(frozen=True)
class ServerUser:
    """Who the server programs run as, and the launcher that makes them so (none when it is
    the harness's own user)."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    launcher: tuple[str, ...]

    @property
    def is_us(self) -> bool:
        return not self.launcher


def server_user() -> ServerUser:
    """The harness's user, or, for root, the `postgres` user (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return ServerUser(getpass.getuser(), os.getuid(), os.getgid(), tuple(os.getgroups()), ())
    try:
        entry = pwd.getpwnam(SERVER_OS_USER)
    except KeyError:
        raise BadInput(
            "PostgreSQL refuses to run as root and this machine has no `postgres` user to run "
            f"it as: apt-get install {PACKAGE} (it creates the user), or run encbench as "
            "another user"
        ) from None
    if entry.pw_uid == 0:
        raise BadInput("the `postgres` user is root here: PostgreSQL refuses to run as root")
    setpriv = proc.which("setpriv")
    if setpriv is None:
        raise BadInput(
            "setpriv not found (to start PostgreSQL as `postgres`): apt-get install util-linux"
        )
    launcher = (
        setpriv,
        f"--reuid={entry.pw_uid}",
        f"--regid={entry.pw_gid}",
        "--init-groups",
        "--",
    )
    groups = tuple(os.getgrouplist(SERVER_OS_USER, entry.pw_gid))
    return ServerUser(SERVER_OS_USER, entry.pw_uid, entry.pw_gid, groups, launcher)


def _may_enter(mode: os.stat_result, user: ServerUser) -> bool:
    """Whether `user` may search a directory of this mode, by its permission bits."""
    if mode.st_uid == user.uid:
        return bool(mode.st_mode & stat.S_IXUSR)
    if mode.st_gid in user.groups:
        return bool(mode.st_mode & stat.S_IXGRP)
    return bool(mode.st_mode & stat.S_IXOTH)


def blocked_at(path: Path, user: ServerUser) -> Path | None:
    """The first existing directory on the way to `path` (itself included) that `user` may
    not enter, by the permission bits, or None.  A directory not made yet is encbench's to
    make (and to make enterable).  Symbolic links are followed: the way is the real one.
    (An ACL that lets the user in is not read: such a directory is named, with the fix.)"""
    if user.is_us:
        return None
    path = path.resolve()
    for directory in [*reversed(path.parents), path]:
        try:
            mode = directory.stat()
        except FileNotFoundError:
            return None
        if not _may_enter(mode, user):
            return directory
    return None


def check_reachable(path: Path, what: str = "results directory") -> None:
    """Refuse, before anything is created, a results directory the server's user cannot
    reach: a directory on its way that only root may enter (a home directory, pytest's own
    temporary root).  Only the way there is checked; the directories encbench makes below
    are made enterable."""
    user = server_user()
    blocked = blocked_at(path.absolute().parent, user)
    if blocked is None:
        return
    mode = stat.S_IMODE(blocked.stat().st_mode)
    raise BadInput(
        f"{what} {path}: PostgreSQL runs as the `{user.name}` user (it refuses root), which "
        f"cannot enter {blocked} (mode {mode:04o}): choose --out under a directory others "
        f"may enter, or allow it with `chmod o+x {blocked}`"
    )


def make_enterable(directory: Path, user: ServerUser) -> None:
    """A directory encbench made (the results directory, its sandbox/): enterable, not
    readable, by the server's user, which needs only to pass through it."""
    if not user.is_us and blocked_at(directory, user) == directory:
        os.chmod(directory, stat.S_IMODE(directory.stat().st_mode) | stat.S_IXOTH)


# -- secrets ----------------------------------------------------------------------------------
def scram_verifier(password: str, salt: bytes | None = None) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, as its
    own `\\password` computes it client-side): what CREATE ROLE is given instead of the
    password.  The password must be ASCII (SASLprep leaves it as it is)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("ascii"), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    return f"SCRAM-SHA-256${SCRAM_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def passfile(directory: Path, name: str, role: str, password: str) -> Path:
    """A libpq password file (mode 0600 from the start) for `role` on any host, port and
    database: the clients find it through PGPASSFILE in their environment."""
    if any(c in password for c in ":\\\n"):
        raise ValueError("a generated password holds no ':', '\\' or line break")
    return keys.write_secret(directory / f"{name}.pgpass", f"*:*:*:{role}:{password}\n")


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """A child's libpq settings: every PG* variable of the user's environment blanked (a
    PGPASSWORD, PGSSLMODE or PGSERVICE of theirs must not change what is measured), then
    `extra`.  libpq treats an empty variable as unset."""
    env = {name: "" for name in os.environ if name.startswith("PG")}
    env.update(extra)
    return env


# -- server settings ------------------------------------------------------------------------
def server_settings(shared_buffers_mb: int = 128) -> dict[str, str]:
    """The settings a study starts its server with beyond the sandbox's own (port, socket,
    connection log): its memory."""
    if shared_buffers_mb < 16:
        raise ValueError(f"shared_buffers of {shared_buffers_mb} MB is below 16 MB")
    return {"shared_buffers": f"{shared_buffers_mb}MB"}


def tls_settings(cert: Path, key: Path, tls_version: str) -> dict[str, str]:
    """TLS on, with this certificate, limited to exactly one protocol version."""
    return {
        "ssl": "on",
        "ssl_cert_file": str(cert),
        "ssl_key_file": str(key),
        "ssl_min_protocol_version": tls_version,
        "ssl_max_protocol_version": tls_version,
    }


# The two lines log_connections writes per connection: counted per run (the study's proof),
# too many to keep (a connect test makes thousands a minute).
CONNECTION_LINES = ("LOG:  connection received: ", "LOG:  connection authorized: ")


def _copy_without_connections(log: Path, to: Path) -> None:
    """The server's log for the record, less its per-connection lines."""
    with open(log, errors="replace") as source, open(to, "w") as target:
        for line in source:
            if not any(mark in line for mark in CONNECTION_LINES):
                target.write(line)


class PgSandbox:
    """One postgres on a private data directory (root/data), a private socket directory and
    a free loopback port.  `launch_prefix` starts the server elsewhere (inside a network
    namespace: net/netns.exec_prefix, which execs the server itself); the harness still
    reaches it over the socket directory, which is the file system's, not the network's."""

    def __init__(self, name: str, root: Path, launch_prefix: Sequence[str] = ()) -> None:
        root = root.absolute()
        check_path(root, "sandbox directory")
        self.name = name
        self.root = root
        self.launch_prefix = list(launch_prefix)
        self.user = server_user()
        self.datadir = root / "data"
        self.log = root / "postgresql.log"
        self.port = free_port()
        self.socket_dir = Path(tempfile.mkdtemp(prefix="encbench-"))
        socket = self.socket_dir / f".s.PGSQL.{self.port}"
        if len(str(socket)) > SOCKET_PATH_MAX:
            raise BadInput(f"socket path {socket} is too long; set TMPDIR shorter")
        self.process: subprocess.Popen[bytes] | None = None
        self.settings: dict[str, str] = {}
        self._entry: registry.Entry | None = None
        # As SandboxServer's: a shape (servers/shapes.py) for the next start, whose group the
        # postmaster joins before it executes (its backends, forked from it, are born in it);
        # None starts it unconfined.
        self.shape: tuple[shapes.Layout, shapes.Limits] | None = None
        self.shaped: shapes.ShapedGroup | None = None  # the running server's, if shaped

    # -- files owned by the server's user -----------------------------------------------------
    def _own(self, path: Path) -> None:
        if not self.user.is_us:
            os.chown(path, self.user.uid, self.user.gid)

    def write_server_file(self, path: Path, text: str, mode: int = 0o600) -> Path:
        """A file the server reads (pg_hba.conf, a TLS key), owned by its user with `mode`
        from the start: PostgreSQL refuses a key others may read."""
        keys.write_secret(path, text)
        os.chmod(path, mode)
        self._own(path)
        return path

    def _as_server(self, argv: list[str]) -> list[str]:
        return [*self.user.launcher, *argv]

    # -- lifecycle ------------------------------------------------------------------------------
    def initialize(self, hba: str) -> None:
        """initdb into the data directory, the administrator trusted over the socket only;
        then `hba` (pg_hba.conf lines after the administrator's) for the study's roles."""
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / registry.SANDBOX_MARKER).write_text("created by encbench; safe to delete\n")
        make_enterable(self.root, self.user)
        self.datadir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.datadir, 0o700)
        self._own(self.datadir)
        self._own(self.socket_dir)
        proc.run(
            self._as_server(
                [
                    program("initdb"),
                    "-D",
                    str(self.datadir),
                    "-U",
                    ADMIN,
                    "--auth-local=trust",
                    "--auth-host=reject",
                    "--encoding=UTF8",
                    "--locale=C",
                    "--no-sync",
                    "--no-instructions",
                ]
            ),
            phase=f"initialize {self.name} server",
            timeout_s=300,
            cwd=self.root,
            stdout_path=self.root / "initdb.log",
            hint=f"its output is in {self.root / 'initdb.log'}",
        )
        lines = [
            "# encbench: the administrator over the private socket directory only",
            "local all all trust",
            hba,
        ]
        self.write_server_file(self.datadir / "pg_hba.conf", "\n".join(lines) + "\n")

    def start(self, settings: Mapping[str, str], timeout_s: float = 60) -> None:
        """Start with the sandbox's settings and `settings`, and wait until `SELECT 1`
        answers over the socket."""
        if self.process is not None:
            raise RuntimeError(f"{self.name} server is already running")
        self.settings = {
            **BASE_SETTINGS,
            "port": str(self.port),
            "unix_socket_directories": str(self.socket_dir),
            **settings,
        }
        argv = [program("postgres"), "-D", str(self.datadir)]
        for name, value in self.settings.items():
            argv += ["-c", f"{name}={value}"]
        offset = self.log_size()
        enter = self._shaped_group()
        try:
            with open(self.log, "ab") as log:
                self.process = proc.start_streams(
                    # The group is joined as encbench's user (root: only it may), then
                    # setpriv becomes the server's user, then postgres: one pid throughout.
                    [*enter, *self.launch_prefix, *self._as_server(argv)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self.root,
                )
        except BaseException:
            self._leave_group(wait_s=0)
            raise
        self._entry = registry.Entry.new(
            self.name,
            self.process.pid,
            self.root,
            self.socket_dir,
            self.datadir / "postgresql.conf",
            kind=registry.POSTGRESQL,
            datadir=self.datadir,
        )
        registry.register(self._entry)
        try:
            self._wait_ready(timeout_s, offset)
        except BaseException:
            self.stop()
            raise

    def _shaped_group(self) -> list[str]:
        """The shaped group the next start enters (made now, before the server exists), and
        the launcher that enters it; none without a shape."""
        if self.shape is None:
            return []
        layout, limits = self.shape
        self.shaped = shapes.ShapedGroup(layout, self.name, limits)
        self.shaped.create()
        return self.shaped.launcher(self.log)

    def _leave_group(self, wait_s: float = cgroup.RMDIR_WAIT_S) -> None:
        """Once the server is gone: whatever its group still holds ended by pid, the group
        removed (one the kernel keeps has its record for `encbench clean`)."""
        shaped, self.shaped = self.shaped, None
        if shaped is not None:
            proc.kill_pids(shaped.members())
            shaped.remove(wait_s=wait_s)

    def _ready_in_pid_file(self) -> bool:
        """postmaster.pid's status line (the 8th) says "ready" once connections are taken."""
        try:
            lines = (self.datadir / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[7].strip() == "ready"

    def _wait_ready(self, timeout_s: float, offset: int) -> None:
        assert self.process is not None
        wait_ready(
            self.process,
            self.name,
            self._answers,
            timeout_s,
            lambda: self.log_since(offset)[-2000:],
            self.log,
        )

    def _answers(self) -> str | None:
        """None once `SELECT 1` answers over the socket; else why not ("" until postmaster.pid
        says ready)."""
        if not self._ready_in_pid_file():
            return ""
        try:
            self.query("SELECT 1", timeout_s=10)
            return None
        except ToolError as exc:
            return str(exc)

    def stop(self, timeout_s: float = 60) -> None:
        """pg_ctl stop -m fast, then -m immediate, then SIGKILL to the server's process
        group; never raises."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            for mode, wait_s in (("fast", timeout_s), ("immediate", 15.0)):
                if process.poll() is not None:
                    break
                with contextlib.suppress(EncbenchError):
                    proc.run(
                        self._as_server(
                            [
                                program("pg_ctl"),
                                "stop",
                                "-D",
                                str(self.datadir),
                                "-m",
                                mode,
                                "-w",
                                "-t",
                                str(int(wait_s)),
                            ]
                        ),
                        phase=f"stop {self.name} server ({mode})",
                        timeout_s=wait_s + 10,
                        cwd=self.root,
                        check=False,
                    )
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)
        finally:
            # Whatever is left (a postmaster that ignored both, backends of one killed
            # outright) goes with the group; the server is reaped.
            proc.stop_group(process, ((None, 0.5),))
            self._leave_group()
            if self._entry is not None:
                registry.unregister(self._entry)
                self._entry = None

    def restart(self, settings: Mapping[str, str]) -> None:
        self.stop()
        self.start(settings)

    def destroy(self, keep_log_in: Path | None = None) -> None:
        """Stop and delete the sandbox; the logs are copied out first for the record."""
        self.stop()
        if keep_log_in is not None:
            keep_log_in.mkdir(parents=True, exist_ok=True)
            initdb_log = self.root / "initdb.log"
            if initdb_log.exists():
                shutil.copy(initdb_log, keep_log_in / f"{self.name}-{initdb_log.name}")
            if self.log.exists():
                _copy_without_connections(self.log, keep_log_in / f"{self.name}-{self.log.name}")
        registry.remove_sandbox_files(self.root, self.socket_dir)

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} server is not running")
        return self.process.pid

    def cpu_seconds(self) -> float:
        """The postmaster's CPU and every backend's, live or reaped: a connection is a
        process of its own."""
        return proc.tree_cpu_seconds([self.pid])

    # -- the log --------------------------------------------------------------------------------
    def log_size(self) -> int:
        try:
            return self.log.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> str:
        """What the server logged from byte `offset` on."""
        try:
            with open(self.log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    # -- SQL as the administrator ---------------------------------------------------------------
    def admin_env(self) -> dict[str, str]:
        return clean_env({"PGHOST": str(self.socket_dir), "PGPORT": str(self.port)})

    def admin_login(self, database: str) -> dict[str, str]:
        """How the administrator reaches this server: over its socket, no password (its
        pg_hba trusts the socket)."""
        return {
            "host": str(self.socket_dir),
            "port": str(self.port),
            "user": ADMIN,
            "dbname": database,
            "connect_timeout": "10",
        }

    def query(
        self, sql: str, *, database: str = "postgres", timeout_s: float = STATUS_TIMEOUT_S
    ) -> list[list[str]]:
        """Rows of `sql` as the administrator over the socket, each a list of its columns as
        text."""
        phase = f"SQL on the {self.name} server"
        try:
            return client.rows(self.admin_login(database), sql, timeout_s, phase)
        except ToolError:
            self.check_alive()
            raise

    def execute(
        self, *statements: str, database: str = "postgres", timeout_s: float = STATUS_TIMEOUT_S
    ) -> None:
        """The statements in turn as the administrator over the socket, each in its own
        transaction; the first error stops them."""
        phase = f"SQL on the {self.name} server"
        try:
            client.execute(self.admin_login(database), statements, timeout_s, phase)
        except ToolError:
            self.check_alive()
            raise

    def create_role(self, role: str, password: str) -> None:
        """A login role for TCP clients, given its password's SCRAM verifier only."""
        self.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{scram_verifier(password)}'")

    def version(self) -> str:
        return self.query("SHOW server_version")[0][0]

    # -- TLS ------------------------------------------------------------------------------------
    def install_tls(self, made: Pki) -> tuple[Path, Path]:
        """The PKI's server certificate and key in the data directory, owned by the server's
        user (it refuses a key that others may read): their paths for tls_settings."""
        cert = self.write_server_file(
            self.datadir / f"encbench-{made.key_type}.crt", made.server_cert.read_text(), 0o644
        )
        key = self.write_server_file(
            self.datadir / f"encbench-{made.key_type}.key", made.server_key.read_text()
        )
        return cert, key

    # -- health ---------------------------------------------------------------------------------
    def check_alive(self) -> None:
        """Raise a ServerError naming the server when it is not running or has died; quiet
        when it runs (a client's failure is then the client's)."""
        if self.process is None:
            raise ServerError(f"the {self.name} server is not running")
        code = self.process.poll()
        if code is not None:
            tail = "\n".join(proc.tail(self.log).splitlines()[-15:])
            status = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
            raise ServerError(
                f"the {self.name} server (pid {self.process.pid}) died ({status})",
                tail=tail,
                hint=f"its log: {self.log}",
            )


def programs_check() -> Check:
    """PostgreSQL's programs, which every PostgreSQL study's sandbox runs (Debian's
    postgresql-15, found wherever `bindir` finds them)."""
    found = postgresql.bindir()  # asked of the kind's module at each call (tests replace it)
    name = f"PostgreSQL ({', '.join(PROGRAMS)})"
    if found is None:
        return Check(
            name,
            False,
            "not found",
            f"apt-get install {PACKAGE} (or scripts/setup.sh PROFILE)",
            PACKAGE,
        )
    return Check(name, True, str(found))
