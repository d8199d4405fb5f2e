"""Whether key rotation can be measured here.  Rotation (innodb_encryption_rotate_key_age)
re-encrypts pages whose key version is older than the latest, so it needs a key management
plugin whose keys have versions.  file_key_management's have one version each; the plugins
that version keys are not packaged for Debian 12's MariaDB (debug_key_management is a test
plugin, hashicorp_key_management and the cloud KMS plugins need a key server), so the report
says that instead of measuring something else under the name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLUGIN_DIR = Path("/usr/lib/mysql/plugin")
# Key management plugins whose keys have versions (so that a new version can be made).
VERSIONED_KEY_PLUGINS = (
    "debug_key_management",
    "hashicorp_key_management",
    "aws_key_management",
    "example_key_management",
)


def key_plugins(plugin_dir: Path = PLUGIN_DIR) -> list[str]:
    """The key management plugins installed (by file name)."""
    try:
        names = sorted(p.stem for p in plugin_dir.glob("*_key_management.so"))
    except OSError:
        return []
    return names


def status(plugin_dir: Path = PLUGIN_DIR) -> dict[str, Any]:
    """What operations.json and the report say about key rotation."""
    found = key_plugins(plugin_dir)
    versioned = [p for p in found if p in VERSIONED_KEY_PLUGINS]
    if versioned:
        reason = (
            f"not measured: {', '.join(versioned)} is installed in {plugin_dir}, but encbench "
            "measures rotation with none yet"
        )
    else:
        reason = (
            f"not measured: the key management plugins in {plugin_dir} are "
            f"{', '.join(found) or 'none'}; file_key_management's keys have one version, so "
            "no new key version can be made and innodb_encryption_rotate_key_age has nothing "
            "to rotate to (debug_key_management is a test plugin Debian does not ship; "
            "hashicorp_key_management needs a Vault server)"
        )
    return {"measured": False, "key_plugins": found, "reason": reason}
