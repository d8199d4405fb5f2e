"""How sysbench 1.0.20 reaches a MariaDB (or MySQL) server: its `mysql` driver's options.

Over the socket, as the invoking OS user, whom MariaDB's unix_socket plugin authenticates
without a password: sysbench 1.0.20 takes a password only as --mysql-password on its command
line, where every user of the machine can read it.  Over TCP (the unix_socket plugin does not
apply), as a password user whose password goes in MYSQL_PWD; with TLS, --mysql-ssl=on, and
sysbench reads the client's PEM files from its working directory (servers/pki.py names
them)."""

from __future__ import annotations

from encbench.servers.target import Connection


def connection_args(conn: Connection, tls: bool) -> list[str]:
    """sysbench's options for where and as whom to connect, and over TCP whether with TLS."""
    where = (
        [f"--mysql-socket={conn.socket}"]
        if conn.socket is not None
        else [f"--mysql-host={conn.host}", f"--mysql-port={conn.port}"]
    )
    argv = ["--db-driver=mysql", *where, f"--mysql-user={conn.user}", f"--mysql-db={conn.database}"]
    if conn.socket is None:
        argv.append(f"--mysql-ssl={'on' if tls else 'off'}")
    return argv
