"""Where a sandbox's server comes from (`[server] install`, `--install`): this host's Debian
MariaDB ("system", as always) or a private root of a newer release (roots.py: "mariadb-11.8",
or "mysql", MySQL 9.7), built by `scripts/setup.sh NAME`, so that one profile can be measured
on each and `encbench compare` says whether encryption got cheaper or dearer between them.

A root's server runs through the root's own loader: its programs are found under its
basedir of wrappers (roots.Root.basedir).  MariaDB's `basedir` option is that directory, so
its plugins (file_key_management) and messages are the root's; MySQL is told where its own
are, and is made (--initialize-insecure) and keyed (its keyring component) its own way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from encbench import proc, roots
from encbench.errors import BadInput

SYSTEM = "system"
MARIADB = "MariaDB"
MYSQL = "MySQL"
INSTALL_HINT = "install it: apt-get install mariadb-server (or run `make setup`)"
# The roots a sandbox can run from, with the family of their server (which studies run
# which family: their definitions' install_families).
ROOT_FAMILIES = {s.name: s.family for s in roots.SPECS}
SANDBOX_ROOTS = tuple(ROOT_FAMILIES)


def find_binary(name: str) -> str:
    """One of this host's MariaDB programs (PATH, then the sbin directories)."""
    found = proc.which(name)
    if found is None:
        raise BadInput(f"{name} not found: {INSTALL_HINT}")
    return found


@dataclass(frozen=True)
class ServerInstall:
    name: str  # "system", or the root's name
    root: Path | None = None  # the root's directory (None: this host's packages)
    basedir: Path | None = None  # the root's basedir of wrappers
    family: str = MARIADB  # MariaDB, or MySQL: how its server is made, keyed and proven

    @property
    def mysql(self) -> bool:
        return self.family == MYSQL

    @property
    def server_program(self) -> str:
        return "mysqld" if self.mysql else "mariadbd"

    def initialize(self, defaults_file: Path, datadir: Path, os_user: str) -> list[str]:
        """The command that makes an empty data directory: mariadb-install-db (root over
        the socket as the OS user), or MySQL's own --initialize-insecure (root@localhost
        without a password, reached over the socket only)."""
        if self.mysql:
            return [
                self.program("mysqld"),
                f"--defaults-file={defaults_file}",
                "--initialize-insecure",
            ]
        return [
            *self.install_db(),
            f"--defaults-file={defaults_file}",
            f"--datadir={datadir}",
            "--auth-root-authentication-method=socket",
            f"--auth-root-socket-user={os_user}",
            "--skip-test-db",
        ]

    def program(self, name: str) -> str:
        """The command that runs one of the server's programs here."""
        if self.basedir is None:
            return find_binary(name)
        for directory in ("sbin", "bin"):
            path = self.basedir / directory / name
            if path.exists():
                return str(path)
        raise BadInput(f"{name} is not in the {self.name} root: rebuild it (scripts/setup.sh)")

    def install_db(self) -> list[str]:
        """mariadb-install-db, as it must run for this install (a root's is a shell script
        that finds the root's programs under --basedir)."""
        if self.root is None or self.basedir is None:
            return [find_binary("mariadb-install-db")]
        return ["sh", str(self.root / "usr/bin/mariadb-install-db"), f"--basedir={self.basedir}"]

    def record(self) -> dict[str, str] | None:
        """What the results keep of a private root (None: this host's packages)."""
        root = roots.find(self.name) if self.root is not None else None
        return root.record() if root is not None else None

    def write_keyring(self, datadir: Path, keyring: Path) -> None:
        """MySQL's keyring component for one server: loaded from its data directory's own
        manifest (the root's global manifest and configuration only say to read the local
        ones), its keyring file at `keyring` (its directory private, the file 0600)."""
        if self.root is None:
            raise BadInput("MySQL's keyring component needs MySQL's private root")
        write_keyring(self.root, datadir, keyring)

    def options(self, files_dir: Path) -> dict[str, str]:
        """What the server's option file must say for this install.  MySQL: its plugins and
        messages are not under its basedir as MariaDB's are; without secure_file_priv it looks
        for Debian's /var/lib/mysql-files (and stops); its X protocol is off."""
        if self.basedir is None:
            return {}
        if not self.mysql or self.root is None:
            return {"basedir": str(self.basedir)}
        return {
            "basedir": str(self.root / "usr"),
            "plugin_dir": str(self.root / "usr/lib/mysql/plugin"),
            "lc_messages_dir": str(self.root / "usr/share/mysql"),
            "secure_file_priv": str(files_dir),
            "mysqlx": "OFF",
            # INFORMATION_SCHEMA.TABLES' sizes from the tables, not a day-old cache: the
            # data's size sets each regime's buffer pool.
            "information_schema_stats_expiry": "0",
        }


HOST = ServerInstall(SYSTEM)
# The root's global manifest and component configuration: each server reads its own.
GLOBAL_MANIFEST = {"read_local_manifest": True}
GLOBAL_KEYRING_CONFIG = {"read_local_config": True}


def _write_private(path: Path, text: str) -> None:
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text)


def write_keyring(root: Path, datadir: Path, keyring: Path) -> None:
    manifest = root / "usr/sbin/mysqld.my"
    config = root / "usr/lib/mysql/plugin/component_keyring_file.cnf"
    for path, content in ((manifest, GLOBAL_MANIFEST), (config, GLOBAL_KEYRING_CONFIG)):
        if not path.exists():
            path.write_text(json.dumps(content) + "\n")
            path.chmod(0o444)  # mysqld warns of a manifest others could change
    (datadir / "mysqld.my").write_text(
        json.dumps({"components": "file://component_keyring_file"}) + "\n"
    )
    keyring.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    local = {"path": str(keyring), "read_only": False}
    _write_private(datadir / "component_keyring_file.cnf", json.dumps(local) + "\n")


def of(name: str) -> ServerInstall:
    """The install of that name; a root that is not built is one line with the fix."""
    if name == SYSTEM:
        return HOST
    root = roots.find(name)
    if root is None:
        raise BadInput(roots.missing_why(name))
    return ServerInstall(name, root.path, root.basedir(), ROOT_FAMILIES.get(name, MARIADB))


def version(name: str) -> str | None:
    """Its server's version as installed, without starting it (None: not built)."""
    if name == SYSTEM:
        return None
    root = roots.find(name)
    return root.version if root is not None else None


def family_of(name: str) -> str:
    """The family of an install's server (MariaDB, MySQL), whether or not it is built."""
    return ROOT_FAMILIES.get(name, MARIADB)
