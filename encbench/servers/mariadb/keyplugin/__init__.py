"""encbench's own key management plugin (encbench_key_management.c beside this file): keys
with versions, so that key rotation can be measured on a MariaDB that ships only
file_key_management, whose keys have one version each.

It is compiled at run time with the system's C compiler against the server's own headers
(Debian: libmariadbd-dev), into a private plugin directory of the sandbox that loads it:
plugin_load_add takes a library name inside plugin_dir, never a path, so that directory also
links the system's plugins, in case an option names one of them.  Without a compiler or the
headers, `problem()` says which package to install, and a profile that asks for key rotation
is refused before anything starts (preflight.key_rotation_checks)."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput

NAME = "encbench_key_management"
SOURCE = f"{NAME}.c"
HEADERS = Path("/usr/include/mariadb/server")
SYSTEM_PLUGIN_DIR = Path("/usr/lib/mysql/plugin")
COMPILERS = ("cc", "gcc")
BUILD_TIMEOUT_S = 120.0


def source_text() -> str:
    return resources.files(__package__).joinpath(SOURCE).read_text()


def compiler() -> str | None:
    return next((found for name in COMPILERS if (found := proc.which(name))), None)


def problem(headers: Path = HEADERS) -> str | None:
    """Why the plugin cannot be built here, as "what is missing: the fix" (it follows "the
    build of encbench_key_management"); None when it can."""
    if compiler() is None:
        return "needs a C compiler (cc), and none is installed: apt-get install gcc"
    if not (headers / "mysql" / "plugin_encryption.h").is_file():
        return (
            f"needs MariaDB's server headers, and {headers} has none: "
            "apt-get install libmariadbd-dev"
        )
    return None


def build_command(cc: str, source: Path, output: Path, headers: Path = HEADERS) -> list[str]:
    """A shared object for mariadbd to dlopen.  MYSQL_DYNAMIC_PLUGIN makes the services
    (my_crypt) calls through the pointer the server fills in at load; `private` holds
    my_config.h's companions on some builds."""
    return [
        cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
        "-DMYSQL_DYNAMIC_PLUGIN",
        f"-I{headers}", f"-I{headers / 'private'}",
        "-o", str(output), str(source),
    ]  # fmt: skip


def source_hash(server_version: str) -> str:
    """What the library depends on: its source and the server it is built for."""
    return hashlib.sha256(f"{server_version}\n{source_text()}".encode()).hexdigest()[:16]


def build(plugin_dir: Path, server_version: str, headers: Path = HEADERS) -> Path:
    """Compile the plugin into plugin_dir (a directory of this run's sandbox), link the
    system's plugins beside it, and return plugin_dir for the server's `plugin_dir`."""
    why = problem(headers)
    if why is not None:
        raise BadInput(f"the build of {NAME} {why}")
    cc = compiler()
    assert cc is not None
    plugin_dir.mkdir(parents=True, exist_ok=True)
    library = plugin_dir / f"{NAME}.so"
    stamp = plugin_dir / f"{NAME}.built-from"
    wanted = source_hash(server_version)
    if library.is_file() and stamp.is_file() and stamp.read_text().strip() == wanted:
        return plugin_dir
    source = plugin_dir / SOURCE
    source.write_text(source_text())
    log = plugin_dir / "build.log"
    proc.run(
        build_command(cc, source, library, headers),
        phase="build encbench_key_management",
        timeout_s=BUILD_TIMEOUT_S,
        stdout_path=log,
        hint=f"the compiler's output is in {log}; the headers come from libmariadbd-dev",
    )
    stamp.write_text(wanted + "\n")
    link_system_plugins(plugin_dir)
    return plugin_dir


def link_system_plugins(plugin_dir: Path, system: Path = SYSTEM_PLUGIN_DIR) -> None:
    """Each system plugin as a symbolic link, so that the private plugin_dir loses none."""
    for found in sorted(system.glob("*.so")) if system.is_dir() else []:
        link = plugin_dir / found.name
        if found.name != f"{NAME}.so" and not link.exists():
            link.symlink_to(found)


def options(plugin_dir: Path, key_file: Path, algorithm: str) -> dict[str, str]:
    """The server options that load the plugin with its keys at version 1."""
    return {
        # The plugin declares itself experimental, which it is; the server's default
        # (gamma) would refuse to load it.
        "plugin_maturity": "experimental",
        "plugin_dir": str(plugin_dir),
        "plugin_load_add": NAME,
        f"{NAME}_filename": str(key_file),
        f"{NAME}_encryption_algorithm": algorithm,
        f"{NAME}_version": "1",
    }
