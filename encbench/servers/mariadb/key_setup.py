"""How a MariaDB server with no active key management plugin gets one, as `encbench plan`
prints it: file_key_management, the plugin every MariaDB server package ships, with a key
file made by openssl.  encbench never does any of it: loading a plugin needs the server's
configuration and a restart, which are the DBA's.

What the server already has is read from INFORMATION_SCHEMA.ALL_PLUGINS (MariaDB: the
plugins it has loaded, and those in its plugin_dir it has not, 'NOT INSTALLED'); a server
that cannot answer it (another family, an old version) is given the same lines without
that detail.
"""

from __future__ import annotations

from typing import Any, Protocol

from encbench.errors import ServerError

PLUGIN = "file_key_management"
KEY_DIR = "/etc/mysql/encryption"
KEY_FILE = f"{KEY_DIR}/keyfile"
NOT_INSTALLED = "NOT INSTALLED"


class _Queryable(Protocol):
    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]: ...


def known_plugins(server: _Queryable) -> dict[str, str] | None:
    """The server's encryption plugins, loaded or only in its plugin_dir, by their status;
    None where the server has no ALL_PLUGINS to ask."""
    try:
        rows = server.query(
            "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.ALL_PLUGINS "
            "WHERE PLUGIN_TYPE = 'ENCRYPTION'"
        )
    except ServerError:
        return None
    return {str(name): str(status) for name, status in rows}


def cnf_lines(algorithm: str) -> list[str]:
    """The option-file lines that load file_key_management with KEY_FILE."""
    return [
        "[mariadb]",
        f"plugin_load_add = {PLUGIN}",
        f"file_key_management_filename = {KEY_FILE}",
        f"file_key_management_encryption_algorithm = {algorithm}",
        "# optional: the key file kept encrypted with a key of its own, made by",
        f"#   openssl rand -hex 32 > {KEY_FILE}.key",
        f"#   openssl enc -aes-256-cbc -md sha1 -pass file:{KEY_FILE}.key -in {KEY_FILE} "
        f"-out {KEY_FILE}.enc",
        "#   (openssl warns of its old key derivation: it is the one the plugin reads)",
        f"# then file_key_management_filename = {KEY_FILE}.enc and",
        f"# file_key_management_filekey = FILE:{KEY_FILE}.key",
    ]


def key_file_commands() -> list[str]:
    """Shell lines (as root on the server's host) that make KEY_FILE: key id 1, a random
    256-bit key, readable by the server's user only from the moment it exists."""
    return [
        f"mkdir -p {KEY_DIR}",
        f'(umask 077; echo "1;$(openssl rand -hex 32)" > {KEY_FILE})',
        f"chown mysql:mysql {KEY_FILE} && chmod 0600 {KEY_FILE}",
    ]


def _what_it_has(known: dict[str, str] | None) -> list[str]:
    if known is None:
        return []
    out = [
        f"{name} is loaded but {status}: the server's error log says why (often its key file)"
        for name, status in sorted(known.items())
        if status not in (NOT_INSTALLED, "ACTIVE")
    ]
    if known.get(PLUGIN) == NOT_INSTALLED:
        out.append(f"{PLUGIN} is in the server's plugin directory, not loaded")
    elif PLUGIN not in known:
        out.append(
            f"{PLUGIN} is not in the server's plugin directory (plugin_dir): install the "
            "server package that ships it"
        )
    return out


def lines(active: list[str], known: dict[str, str] | None, algorithm: str) -> list[str]:
    """`plan`'s lines on the target's key management (indented under the target)."""
    if active:
        return [f"  key management: {', '.join(active)} active — tables can be encrypted"]
    out = [
        "  key management: no key management plugin is active (INFORMATION_SCHEMA.PLUGINS, "
        "type ENCRYPTION), so no table can be encrypted"
    ]
    out += [f"    {line}" for line in _what_it_has(known)]
    out += [
        f"    to load {PLUGIN}, as root on the server's host:",
        "    1. make its key file (key id 1, a random 256-bit key), mode 0600, owned by the "
        "server's user; keep a copy — without it encrypted tables cannot be read:",
        *(f"         {command}" for command in key_file_commands()),
        "    2. add these lines to a file the server reads at start-up (Debian: "
        "/etc/mysql/mariadb.conf.d/60-encryption.cnf):",
        *(f"         {line}" for line in cnf_lines(algorithm)),
        "    3. restart the server (e.g. systemctl restart mariadb): a plugin loads only when "
        "the server starts, and encbench never restarts a server, loads a plugin or changes "
        "a global variable",
    ]
    return out
