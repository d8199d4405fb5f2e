"""Where a sandbox's server comes from (`[server] install`, `--install`): this host's Debian
MariaDB ("system", as always) or a private root of a newer release (machine/roots.py:
"mariadb-11.8", or "mysql", MySQL 9.7), built by `scripts/setup.sh NAME`, so that one profile can
be measured on each and `encbench compare` says whether encryption got cheaper or dearer between
them.

A root's server runs through the root's own loader: its programs are found under its
basedir of wrappers (roots.Root.basedir).  MariaDB's `basedir` option is that directory, so
its plugins (file_key_management) and messages are the root's; MySQL is told where its own
are, and is made (--initialize-insecure) and keyed (its keyring component) its own way."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench import proc
from encbench.errors import BadInput
from encbench.machine import roots
from encbench.servers import keys
from encbench.servers.variants import Algorithm, KeyProvider

SYSTEM = "system"
MARIADB = "MariaDB"
MYSQL = "MySQL"
INSTALL_HINT = "install it: apt-get install mariadb-server (or run `make setup`)"
# The roots a sandbox can run from (which studies run which family: their definitions'
# install_families).
SANDBOX_ROOTS = tuple(s.name for s in roots.SPECS)
# MySQL's options that encrypt its logs (scope `all`): redo, undo, binary log.
MYSQL_LOG_ENCRYPTION = ("innodb_redo_log_encrypt", "innodb_undo_log_encrypt", "binlog_encryption")
# A MySQL root's global manifest and component configuration: each server reads its own.
GLOBAL_MANIFEST = {"read_local_manifest": True}
GLOBAL_KEYRING_CONFIG = {"read_local_config": True}


def find_binary(name: str) -> str:
    """One of this host's MariaDB programs (PATH, then the sbin directories)."""
    found = proc.which(name)
    if found is None:
        raise BadInput(f"{name} not found: {INSTALL_HINT}")
    return found


@dataclass(frozen=True)
class ServerInstall:
    root: roots.Root | None = None  # None: this host's packages
    basedir: Path | None = None  # the root's basedir of wrappers (Root.basedir)

    @property
    def name(self) -> str:
        return self.root.spec.name if self.root is not None else SYSTEM

    @property
    def family(self) -> str:  # MariaDB, or MySQL: how its server is made, keyed and proven
        return self.root.spec.family if self.root is not None else MARIADB

    @property
    def mysql(self) -> bool:
        return self.family == MYSQL

    @property
    def server_program(self) -> str:
        return "mysqld" if self.mysql else "mariadbd"

    def initialize(self, defaults_file: Path, datadir: Path, os_user: str) -> list[str]:
        """The command that makes an empty data directory: mariadb-install-db (root over
        the socket as the OS user; a root's is a shell script that finds the root's programs
        under --basedir), or MySQL's own --initialize-insecure (root@localhost without a
        password, reached over the socket only)."""
        if self.mysql:
            return [
                self.program("mysqld"),
                f"--defaults-file={defaults_file}",
                "--initialize-insecure",
            ]
        if self.root is None:
            install_db = [find_binary("mariadb-install-db")]
        else:
            script = self.root.program("usr/bin/mariadb-install-db")
            install_db = ["sh", str(script), f"--basedir={self.basedir}"]
        return [
            *install_db,
            f"--defaults-file={defaults_file}",
            f"--datadir={datadir}",
            "--auth-root-authentication-method=socket",
            f"--auth-root-socket-user={os_user}",
            "--skip-test-db",
        ]

    def initialize_options(self, options: dict[str, str]) -> dict[str, str]:
        """The options the data directory is made with.  MySQL's --initialize cannot load
        its keyring component (the manifest goes into the data directory it makes), so its
        logs' encryption, which needs a key at once, starts with the server; their proofs
        are of what is written from then on (proof/at_rest.py)."""
        if not self.mysql:
            return options
        return {k: v for k, v in options.items() if k not in MYSQL_LOG_ENCRYPTION}

    def program(self, name: str) -> str:
        """The command that runs one of the server's programs here."""
        if self.basedir is None:
            return find_binary(name)
        for directory in ("sbin", "bin"):
            path = self.basedir / directory / name
            if path.exists():
                return str(path)
        raise BadInput(f"{name} is not in the {self.name} root: rebuild it (scripts/setup.sh)")

    def record(self) -> dict[str, str] | None:
        """What the results keep of a private root (None: this host's packages)."""
        return self.root.record() if self.root is not None else None

    def write_keyring(self, datadir: Path, keyring: Path) -> None:
        """MySQL's keyring component for one server: loaded from its data directory's own
        manifest (the root's global manifest and configuration only say to read the local
        ones), its keyring file at `keyring` (its directory private, the file 0600)."""
        if self.root is None:
            raise BadInput("MySQL's keyring component needs MySQL's private root")
        shared = (
            (self.root.program("usr/sbin/mysqld.my"), GLOBAL_MANIFEST),
            (self.root.program("usr/lib/mysql/plugin/component_keyring_file.cnf"),
             GLOBAL_KEYRING_CONFIG),
        )  # fmt: skip
        for path, content in shared:
            if not path.exists():
                path.write_text(json.dumps(content) + "\n")
                path.chmod(0o444)  # mysqld warns of a manifest others could change
        (datadir / "mysqld.my").write_text(
            json.dumps({"components": "file://component_keyring_file"}) + "\n"
        )
        keyring.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        local = {"path": str(keyring), "read_only": False}
        keys.write_secret(datadir / "component_keyring_file.cnf", json.dumps(local) + "\n")

    def options(self, files_dir: Path) -> dict[str, str]:
        """What the server's option file must say for this install.  MySQL: its plugins and
        messages are not under its basedir as MariaDB's are; without secure_file_priv it looks
        for Debian's /var/lib/mysql-files (and stops); its X protocol is off."""
        if self.root is None or self.basedir is None:
            return {}
        if not self.mysql:
            return {"basedir": str(self.basedir)}
        return {
            "basedir": str(self.root.program("usr")),
            "plugin_dir": str(self.root.program("usr/lib/mysql/plugin")),
            "lc_messages_dir": str(self.root.program("usr/share/mysql")),
            "secure_file_priv": str(files_dir),
            "mysqlx": "OFF",
            # INFORMATION_SCHEMA.TABLES' sizes from the tables, not a day-old cache: the
            # data's size sets each regime's buffer pool.
            "information_schema_stats_expiry": "0",
        }


HOST = ServerInstall()


def of(name: str) -> ServerInstall:
    """The install of that name; a root that is not built is one line with the fix."""
    if name == SYSTEM:
        return HOST
    root = roots.find(name)
    if root is None:
        raise BadInput(roots.missing_why(name))
    return ServerInstall(root, root.basedir())


def recorded_family(record: Mapping[str, Any] | None) -> str:
    """The family of the server a study's record (at-rest.json, in-transit.json) describes:
    a target's as read from it, a sandbox's as made or from its install; MariaDB where none
    is kept (this host's, or results written before families were recorded)."""
    record = record or {}
    found = (record.get("target") or {}).get("family") or record.get("family")
    if found:
        return str(found)
    install = record.get("install") or {}
    if not install.get("name"):
        return MARIADB
    try:
        return family_of(str(install["name"]))
    except BadInput:  # results of a root this encbench does not know (another version's)
        return f"the {install['name']} root's server"


def title(family: str) -> str | None:
    """What a report calls the server beyond its kind: None for MariaDB, the kind's own."""
    return None if family == MARIADB else family


def family_of(name: str) -> str:
    """The family of an install's server (MariaDB, MySQL), whether or not it is built."""
    return MARIADB if name == SYSTEM else roots.spec(name).family


class ServerChoice(Protocol):
    """What a release's own rules read of the profile's `[server]` (its ServerSpec): said
    here so that servers/ does not import the profile above it."""

    @property
    def install(self) -> str: ...

    @property
    def key_provider(self) -> KeyProvider | None: ...

    @property
    def encryption_layer(self) -> Sequence[str]: ...

    @property
    def encryption_algorithm(self) -> Sequence[str]: ...


# The ciphers MariaDB encrypts with when a key server's plugin (hashicorp_key_management,
# which gives keys only) reads its keys: the server's default, AES-CBC (sql/encryption.cc).
KEY_SERVER_ALGORITHMS: tuple[Algorithm, ...] = ("AES_CBC",)


def own_key_provider(install: str) -> KeyProvider:
    """Where a release's server reads its TDE keys unless the profile names another: MySQL's
    community server from its keyring component, MariaDB from a key file."""
    return "keyring-file" if family_of(install) == MYSQL else "key-file"


def key_provider_problem(server: ServerChoice) -> str | None:
    """A key provider the release's server cannot read its keys from."""
    mysql = family_of(server.install) == MYSQL
    if server.key_provider == "key-file" and mysql:
        return (
            'server.key_provider = "key-file": the community server of MySQL has no key file '
            'plugin, only its keyring file component: set key_provider = "keyring-file" or '
            "remove it"
        )
    if server.key_provider == "keyring-file" and not mysql:
        return (
            'server.key_provider = "keyring-file" is the keyring component of MySQL, which '
            'MariaDB has not: set key_provider = "key-file", or server.install = "mysql"'
        )
    if server.key_provider == "key-server":
        if mysql:
            return (
                'server.key_provider = "key-server": the community server of MySQL reads its '
                "keys from its keyring file component only (a key server's client is MySQL "
                'Enterprise\'s): set key_provider = "keyring-file", or measure MariaDB'
            )
        other = [a for a in server.encryption_algorithm if a not in KEY_SERVER_ALGORITHMS]
        if other:
            return (
                f"server.encryption_algorithm {other[0]}: with a key server (hashicorp_key_"
                "management) MariaDB encrypts with AES_CBC, which its plugin leaves to the "
                'server: set encryption_algorithm = ["AES_CBC"], or remove it'
            )
    return None


def sandbox_problem(server: ServerChoice) -> str | None:
    """What the release's sandboxes do not measure yet: MySQL's, its own encryption (tables,
    or with its logs) alone, with MySQL's one cipher."""
    if family_of(server.install) != MYSQL:
        return None
    if server.encryption_layer != ["tde"]:
        return (
            'server.install = "mysql" measures MySQL\'s own encryption (layer "tde") only so '
            "far: remove server.encryption_layer"
        )
    if server.encryption_algorithm != ["AES_CTR"]:
        return (
            'server.install = "mysql": MySQL\'s InnoDB has one cipher (AES-256) and no '
            "choice of algorithm: remove server.encryption_algorithm"
        )
    return None
