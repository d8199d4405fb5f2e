"""Private Debian roots: newer servers than this host's Debian ships, installed from Debian's
own archive into encbench's data directory and run from there, without touching the host.

MySQL 9.7 (Debian's development suite, sid) and MariaDB 11.8 (Debian 13, trixie) need a
newer C library than Debian 12 has.  A DBA would try such a server in a container or a
chroot; encbench builds the root once with mmdebstrap (a Debian 12 package) and runs its
binaries through the root's own dynamic loader (`ld-linux … --library-path`), so a server
from the root keeps its data directory, sockets and files wherever encbench puts them, and
needs no chroot.  Nothing is installed into the host system; `rm -r` of the root removes it.

A root is complete once its stamp (`encbench-root.json`: suite, packages, the server's
version, when) is written; it is built under another name and renamed into place, so a
build that is interrupted leaves no half root that looks whole.

    python -m encbench.machine.roots build NAME     # what scripts/setup.sh NAME runs
    python -m encbench.machine.roots names          # the roots it knows, one a line
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from encbench import proc, state
from encbench.errors import BadInput, ToolError

STAMP = "encbench-root.json"
MIRROR = "http://deb.debian.org/debian"
# The development suite's Release file is older than its Valid-Until on any later day: apt
# refuses it unless told this.
APT_OPTIONS = ('Acquire::Check-Valid-Until "false"',)
BUILD_TIMEOUT_S = 1800.0
LIBRARY_DIRS = ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu")
LOADER = "lib64/ld-linux-x86-64.so.2"
# Inside a root: its programs wrapped for this host (Root.basedir).
SHIM = "encbench-basedir"
# The programs a server's tools look for under its basedir (mariadb-install-db runs
# my_print_defaults, resolveip and the server).
SERVER_PROGRAMS = ("mariadb", "mysql", "my_print_defaults", "resolveip")


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


@dataclass(frozen=True)
class RootSpec:
    """A root encbench knows how to build: its name (as scripts/setup.sh takes it), the
    Debian suite and packages, its server binary and how its version is read."""

    name: str
    title: str  # "MySQL 9.7"
    suite: str
    packages: tuple[str, ...]
    server: str  # the server binary, inside the root
    version_pattern: str  # read from `server --version`
    family: str  # "MySQL" or "MariaDB": how its server is made, keyed and proven


SPECS: tuple[RootSpec, ...] = (
    RootSpec(
        name="mysql",
        title="MySQL 9.7",
        suite="sid",
        packages=("mysql-server-core", "mysql-client-core"),
        server="usr/sbin/mysqld",
        version_pattern=r"Ver\s+(\S+)",
        family="MySQL",
    ),
    RootSpec(
        name="mariadb-11.8",
        title="MariaDB 11.8",
        suite="trixie",
        # The server package, not only its core: file_key_management is in it.
        packages=("mariadb-server", "mariadb-client"),
        server="usr/sbin/mariadbd",
        version_pattern=r"Ver\s+(\S+)",
        family="MariaDB",
    ),
)


def spec(name: str) -> RootSpec:
    for s in SPECS:
        if s.name == name:
            return s
    known = ", ".join(s.name for s in SPECS)
    raise BadInput(f"no private root is named {name!r}: give one of {known}")


@dataclass(frozen=True)
class Root:
    """A built root: where it is and what its stamp says."""

    spec: RootSpec
    path: Path
    version: str

    def package_version(self, pattern: str) -> str | None:
        """The version of the root's package(s) matching pattern, as its dpkg records it:
        e.g. its OpenSSL (libssl*), which its server's encryption and TLS use, not the
        host's."""
        found = proc.run(
            ["dpkg-query", f"--admindir={self.path / 'var/lib/dpkg'}", "-W", pattern],
            phase="dpkg-query",
            timeout_s=30,
            check=False,
        ).stdout
        versions = [line.split("\t")[1] for line in found.splitlines() if "\t" in line]
        return next((v for v in versions if v), None)

    def record(self) -> dict[str, str]:
        """What a results directory keeps of the root its servers ran from."""
        return {
            "name": self.spec.name,
            "suite": self.spec.suite,
            "server": self.version,
            "openssl": self.package_version("libssl*") or "?",
        }

    def program(self, relative: str) -> Path:
        return self.path / relative

    def basedir(self) -> Path:
        """An installation directory of the root's server for the tools that find their
        programs under one (mariadb-install-db's --basedir, the server's own basedir for its
        plugins and messages): its programs as wrappers that run them through the root's
        loader, its data and libraries as links into the root.  Made on first use."""
        shim = self.path / SHIM
        for directory in ("bin", "sbin"):
            (shim / directory).mkdir(parents=True, exist_ok=True)
            for program in sorted((self.path / "usr" / directory).iterdir()):
                wrapper = shim / directory / program.name
                if wrapper.exists() or not program.name.startswith(SERVER_PROGRAMS):
                    continue
                if not _is_elf(program):
                    continue
                argv = " ".join(
                    shlex.quote(a) for a in self.argv(f"usr/{directory}/{program.name}")
                )
                wrapper.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
                wrapper.chmod(0o755)
        for link in ("share", "lib"):
            if not (shim / link).exists():
                (shim / link).symlink_to(self.path / "usr" / link)
        return shim

    def argv(self, relative: str) -> list[str]:
        """The command that runs one of the root's programs on this host: through the root's
        own loader and libraries (the host's C library is older than the program needs)."""
        libraries = ":".join(str(self.path / d) for d in LIBRARY_DIRS)
        return [
            str(self.path / LOADER),
            "--library-path",
            libraries,
            str(self.program(relative)),
        ]


def where(name: str) -> Path:
    return state.data_base() / "roots" / spec(name).name


def find(name: str) -> Root | None:
    """The built root of that name, or None (not built, or its build never finished)."""
    path = where(name)
    try:
        stamp = json.loads((path / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return Root(spec(name), path, str(stamp.get("version", "?")))


def missing_why(name: str) -> str:
    return f"{spec(name).title} is not built here: run `sudo scripts/setup.sh {name}` (once)"


def build(name: str, log: object = print) -> Root:
    """Build the root (about 15 s and 500 MB for MySQL on this network) unless it is built."""
    s = spec(name)
    found = find(name)
    if found is not None:
        return found
    if os.geteuid() != 0:
        raise BadInput(
            f"building the {s.title} root needs root (mmdebstrap): sudo scripts/setup.sh {name}"
        )
    mmdebstrap = proc.which("mmdebstrap")
    if mmdebstrap is None:
        raise BadInput("building a private root needs mmdebstrap: sudo apt-get install mmdebstrap")
    path = where(name)
    partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    argv = [
        mmdebstrap,
        "--variant=minbase",
        "--quiet",
        f"--include={','.join(s.packages)}",
        *(f"--aptopt={o}" for o in APT_OPTIONS),
        s.suite,
        str(partial),
        MIRROR,
    ]
    _say(log, f"building the {s.title} root from Debian {s.suite} in {path} (once)")
    try:
        proc.run(argv, phase=f"mmdebstrap {s.suite}", timeout_s=BUILD_TIMEOUT_S)
        root = Root(s, partial, "?")
        version = proc.tool_version([*root.argv(s.server), "--version"], s.version_pattern)
        if version is None:
            raise BadInput(f"the {s.title} root was built, and its server does not run here")
        stamp = {
            "name": s.name,
            "suite": s.suite,
            "packages": list(s.packages),
            "version": version,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (partial / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
        shutil.rmtree(path, ignore_errors=True)
        partial.rename(path)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    built = find(name)
    assert built is not None
    _say(log, f"{s.title}: {built.version} in {built.path}")
    return built


def _say(log: object, line: str) -> None:
    if callable(log):
        log(line)


def main(argv: list[str]) -> int:
    if argv == ["names"]:
        print("\n".join(s.name for s in SPECS))
        return 0
    if len(argv) == 2 and argv[0] == "build":
        try:
            build(argv[1], lambda line: print(f"setup: {line}", file=sys.stderr))
        except BadInput as exc:
            print(f"setup: {exc}", file=sys.stderr)
            return 2
        except ToolError as exc:
            print(f"setup: {exc}", file=sys.stderr)
            return 1
        return 0
    print("usage: python -m encbench.machine.roots build NAME | names", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
