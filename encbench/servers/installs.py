"""Where a sandbox's MariaDB comes from (`[server] install`): this host's Debian packages
("system", as always) or a private root of a newer release (roots.py, e.g. "mariadb-11.8",
built by `scripts/setup.sh mariadb-11.8`), so that one profile can be measured on both and
`encbench compare` says whether encryption got cheaper or dearer between releases.

A root's server runs through the root's own loader: its programs are found under its
basedir of wrappers (roots.Root.basedir), which is also the server's `basedir` option, so its
plugins (file_key_management) and messages are the root's, not this host's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from encbench import proc, roots
from encbench.errors import BadInput

SYSTEM = "system"
INSTALL_HINT = "install it: apt-get install mariadb-server (or run `make setup`)"
# The roots a MariaDB sandbox can run from (MySQL's root is measured as a target).
MARIADB_ROOTS = ("mariadb-11.8",)


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

    def options(self) -> dict[str, str]:
        """What the server's option file must say for this install."""
        return {} if self.basedir is None else {"basedir": str(self.basedir)}


HOST = ServerInstall(SYSTEM)


def of(name: str) -> ServerInstall:
    """The install of that name; a root that is not built is one line with the fix."""
    if name == SYSTEM:
        return HOST
    root = roots.find(name)
    if root is None:
        raise BadInput(roots.missing_why(name))
    return ServerInstall(name, root.path, root.basedir())


def version(name: str) -> str | None:
    """Its server's version as installed, without starting it (None: not built)."""
    if name == SYSTEM:
        return None
    root = roots.find(name)
    return root.version if root is not None else None
