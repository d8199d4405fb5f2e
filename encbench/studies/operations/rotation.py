"""What operations.json and the report say about key rotation.  Rotation
(innodb_encryption_rotate_key_age) re-encrypts pages whose key version is older than the
latest, so it needs a key management plugin whose keys have versions.  Debian 12's MariaDB
ships only file_key_management, whose keys have one version each, so encbench builds its own,
encbench_key_management (servers/mariadb/keyplugin); where it cannot be built (no compiler, no
server
headers) or the profile does not ask for the cell, the report says why it was not measured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from encbench.servers.mariadb import keyplugin

PLUGIN_DIR = keyplugin.SYSTEM_PLUGIN_DIR
ASK = 'add "key-rotation" to operations.operations'


def key_plugins(plugin_dir: Path = PLUGIN_DIR) -> list[str]:
    """The key management plugins installed (by file name)."""
    try:
        names = sorted(p.stem for p in plugin_dir.glob("*_key_management.so"))
    except OSError:
        return []
    return names


def status(
    wanted: bool, plugin_dir: Path = PLUGIN_DIR, problem: str | None = None
) -> dict[str, Any]:
    """Whether this run measures key rotation, and if not, why (`problem`: why the plugin
    cannot be built here, keyplugin.problem())."""
    found = key_plugins(plugin_dir)
    if wanted and problem is None:
        return {
            "measured": True,
            "key_plugins": found,
            "key_plugin": keyplugin.NAME,
            "reason": "",
        }
    if problem is not None:
        reason = (
            "not measured: file_key_management's keys have one version, and the build of "
            f"{keyplugin.NAME}, encbench's plugin with versioned keys, {problem}"
        )
    else:
        reason = f"not measured: the profile does not ask for it ({ASK})"
    return {"measured": False, "key_plugins": found, "reason": reason}
