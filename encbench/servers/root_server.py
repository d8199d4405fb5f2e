"""A MySQL server run from a private root (roots.py) in a directory of its own: the server a
DBA starts by hand to try encbench against a current MySQL without upgrading the host, and
the one the MySQL tests measure as a target.

    base/my.cnf       its options (0600), the only file its command line names
    base/data/        initialised with --initialize-insecure (root@localhost by socket only)
    base/data/mysqld.my, component_keyring_file.cnf
                      the keyring component, loaded from the data directory's own manifest
                      (the root's global manifest only says to read it), its keyring file
                      in base/private/ (0700)
    base/private/     the keyring, and the password of the login it creates (0600)

It listens on 127.0.0.1 only, with MySQL's X protocol off, and is stopped by pid (SIGTERM,
then SIGKILL).  It is recorded for `encbench clean` as a MySQL-protocol server recognised by
its own option file on its command line, like a MariaDB sandbox.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
from pathlib import Path

import pymysql

from encbench import proc
from encbench.errors import ToolError
from encbench.roots import Root
from encbench.servers import installs, registry
from encbench.servers.sandbox import wait_ready

START_TIMEOUT_S = 120.0
INIT_TIMEOUT_S = 300.0
STOP_STEPS = ((signal.SIGTERM, 60.0), (signal.SIGKILL, 10.0))


def _write_private(path: Path, text: str) -> None:
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text)


class RootServer:
    def __init__(self, root: Root, base: Path, port: int, name: str = "mysql") -> None:
        self.root = root
        self.base = base
        self.port = port
        self.name = name
        self.datadir = base / "data"
        self.private = base / "private"
        self.socket = base / "mysqld.sock"
        self.error_log = base / "error.log"
        self.defaults_file = base / "my.cnf"
        self.process: subprocess.Popen[bytes] | None = None
        self._entry: registry.Entry | None = None

    # -- set-up ---------------------------------------------------------------------------
    def _options(self) -> str:
        r = self.root.path
        lines = {
            "basedir": r / "usr",
            "datadir": self.datadir,
            "plugin_dir": r / "usr/lib/mysql/plugin",
            "lc_messages_dir": r / "usr/share/mysql",
            "socket": self.socket,
            "port": self.port,
            "bind_address": "127.0.0.1",
            "mysqlx": "OFF",
            "secure_file_priv": self.base / "files",
            "pid_file": self.base / "mysqld.pid",
            "log_error": self.error_log,
            "user": "root",
        }
        return "[mysqld]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items())

    def _keyring_files(self) -> None:
        """The keyring component from the data directory's manifest, its file private."""
        installs.write_keyring(self.root.path, self.datadir, self.private / "keyring")

    def initialize(self) -> None:
        """An empty data directory, its keyring component configured."""
        self.base.mkdir(parents=True, exist_ok=True)
        self.private.mkdir(mode=0o700, exist_ok=True)
        (self.base / "files").mkdir(exist_ok=True)
        _write_private(self.defaults_file, self._options())
        proc.run(
            [
                *self.root.argv(self.root.spec.server),
                f"--defaults-file={self.defaults_file}",
                "--initialize-insecure",
            ],
            phase="mysqld --initialize-insecure",
            timeout_s=INIT_TIMEOUT_S,
            hint=f"see {self.error_log}",
        )
        self._keyring_files()

    # -- running --------------------------------------------------------------------------
    def start(self) -> None:
        if self.process is not None:
            raise RuntimeError(f"{self.name} is already running")
        self.socket.unlink(missing_ok=True)
        self.error_log.touch()
        offset = self.error_log.stat().st_size
        self.process = proc.start_streams(
            [*self.root.argv(self.root.spec.server), f"--defaults-file={self.defaults_file}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._entry = registry.Entry.new(
            self.name, self.process.pid, self.base, self.base, self.defaults_file
        )
        registry.register(self._entry)
        try:
            wait_ready(
                self.process,
                self.name,
                self._answers,
                START_TIMEOUT_S,
                lambda: self._log_since(offset),
                self.error_log,
            )
        except BaseException:
            self.stop()
            raise

    def _connect(self, database: str | None = None) -> pymysql.connections.Connection:
        return pymysql.connect(
            unix_socket=str(self.socket), user="root", database=database, connect_timeout=5
        )

    def _answers(self) -> str | None:
        if not self.socket.exists():
            return ""
        try:
            with self._connect() as conn, conn.cursor() as cur:
                cur.execute("SELECT 1")
            return None
        except pymysql.MySQLError as exc:
            return str(exc)

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.error_log, errors="replace") as f:
                f.seek(offset)
                return "\n".join(f.read().splitlines()[-15:])
        except OSError:
            return ""

    def sql(self, statement: str, database: str | None = None) -> list[tuple[object, ...]]:
        """One statement as root over the socket; its rows."""
        with self._connect(database) as conn, conn.cursor() as cur:
            cur.execute(statement)
            rows = list(cur.fetchall())
            conn.commit()
            return rows

    def create_login(self, user: str) -> str:
        """A login over TCP with every privilege and a generated password (MySQL's default
        authentication, caching_sha2_password), kept in private/ (0600); the password."""
        password = secrets.token_urlsafe(18)
        _write_private(self.private / f"{user}.password", password + "\n")
        with self._connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, password))
            cur.execute(f"GRANT ALL ON *.* TO `{user}`@'%'")
        return password

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), then SIGKILL; never raises."""
        process, self.process = self.process, None
        if process is not None:
            proc.stop_group(process, STOP_STEPS)
        if self._entry is not None:
            registry.unregister(self._entry)
            self._entry = None

    def version(self) -> str:
        rows = self.sql("SELECT VERSION()")
        if not rows:
            raise ToolError("the server did not say its version", phase="SELECT VERSION()")
        return str(rows[0][0])
