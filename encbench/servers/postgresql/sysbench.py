"""How sysbench 1.0.20 reaches a PostgreSQL server: its `pgsql` driver's options.

Its socket is the directory libpq finds it in (PGHOST), with its port; the password, where
one is asked, comes from libpq's own places (PGPASSWORD, a password file), never the command
line."""

from __future__ import annotations

from pathlib import Path

from encbench.servers.target import Connection


def socket_connection(socket_dir: Path, port: int, user: str, database: str) -> Connection:
    """A connection over the server's socket, in the directory libpq takes as its host."""
    return Connection(user, database, socket=socket_dir, port=port, kind="postgresql")


def connection_args(conn: Connection, tls: bool) -> list[str]:
    """sysbench's options for where and as whom to connect (libpq chooses TLS by its own
    settings: sysbench 1.0.20's pgsql driver has no option for it)."""
    # libpq takes a socket's directory as its host.
    host = str(conn.socket) if conn.socket is not None else conn.host
    return [
        "--db-driver=pgsql",
        f"--pgsql-host={host}",
        f"--pgsql-port={conn.port}",
        f"--pgsql-user={conn.user}",
        f"--pgsql-db={conn.database}",
    ]
