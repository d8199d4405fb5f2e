"""That a MariaDB server's keys came from the key server (servers/key_server.py), read of
the server and the key server at once: its hashicorp_key_management plugin is active, every
encrypted tablespace of the database has a key id and version the key server holds, and
the key server's audit log shows its reads of those keys.  A server whose plugin is not
active, or a key server that answered no read, fails the proof."""

from __future__ import annotations

from typing import Any, Protocol

from encbench.errors import ProofError
from encbench.servers.key_server import KeyServer

PLUGIN = "hashicorp_key_management"


class _Queryable(Protocol):
    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]: ...


def prove(server: _Queryable, key_server: KeyServer, database: str, name: str) -> dict[str, Any]:
    """The proof, as at-rest.json records it; ProofError where it fails."""
    status = server.query(
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = %s", (PLUGIN,)
    )
    if status != [("ACTIVE",)]:
        raise ProofError(f"{name}: the key server's plugin ({PLUGIN}) is not active: {status}")
    rows = server.query(
        "SELECT CURRENT_KEY_ID, CURRENT_KEY_VERSION, COUNT(*) FROM "
        "information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME LIKE %s "
        "GROUP BY CURRENT_KEY_ID, CURRENT_KEY_VERSION",
        (f"{database}/%",),
    )
    if not rows:
        raise ProofError(f"{name}: no tablespace of {database} is encrypted")
    keys = {f"key {k} version {v}": int(n) for k, v, n in rows}
    reads = {int(k): key_server.key_reads(int(k)) for k, _, _ in rows}
    unread = [k for k, n in reads.items() if n == 0]
    if unread:
        raise ProofError(
            f"{name}: the key server's audit log shows no read of key {unread[0]}, which its "
            "tablespaces are encrypted with: its keys did not come from the key server"
        )
    return {
        "plugin": f"{PLUGIN} ACTIVE",
        "tablespaces": keys,
        "key_server_reads": {f"key {k}": n for k, n in reads.items()},
        **key_server.prove(next(iter(reads))),
    }
