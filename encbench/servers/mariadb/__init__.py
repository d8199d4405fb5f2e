"""MariaDB (and, as a target, MySQL): its facts.  mariadbd sandboxes (servers/mariadb/sandbox.py),
InnoDB's own encryption with a key management plugin (servers/mariadb/key_setup.py,
servers/mariadb/options.py), TLS by the server's own options, sysbench's `mysql` driver as the
load, and a target reached by mysql:// with the password from MYSQL_PWD or an option file.
Its ways (tools, a target's checks) are in servers/mariadb/ways.py.  MySQL is a release of
this kind, not a kind of its own: the same protocol, client, driver and load, installed from
a private root (servers/mariadb/installs.py)."""

from __future__ import annotations

import shutil
import signal

import psutil

from encbench import proc
from encbench.servers.kind import Sandboxed, ServerKind
from encbench.servers.mariadb import sysbench

# mariadbd shuts down cleanly on SIGTERM once it has started.
SERVER_STOP = ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0))
# But not while it starts: MariaDB 10.11.19 sent SIGTERM 20-90 ms after its exec ran on to its
# socket and then hung before "ready for connections", deaf to every later SIGTERM (measured
# here, 3 of 60 delays, 4 SIGTERMs a second apart).  A server stopped before it ever answered
# is a throwaway that never came up: SIGKILL soon after.
STARTING_STOP = ((signal.SIGTERM, 2.0), (signal.SIGKILL, 10.0))


def _stop(server: psutil.Process) -> None:
    proc.stop_group(server, SERVER_STOP)


def _installed_version() -> str | None:
    mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
    return proc.tool_version([mariadbd, "--version"], r"Ver\s+(\S+)")


KIND = ServerKind(
    name="mariadb",
    title="MariaDB",
    schemes=("mysql", "mariadb"),
    default_port=3306,
    dsn_parameters={
        # As the client tools name them → the [target] key.
        "socket": "socket",
        "ssl-ca": "ssl_ca",
        "ssl-cert": "ssl_cert",
        "ssl-key": "ssl_key",
        # Not a client tool's: the server's host over ssh, for its CPU ([target] ssh).
        "ssh": "ssh",
        "ssh-config": "ssh_config",
    },
    password_fix="give the password in MYSQL_PWD or in an option file (--defaults-extra-file)",
    installed_version=_installed_version,
    sandbox=Sandboxed(
        # mariadbd names its defaults file as part of one argument (--defaults-file=PATH).
        mark=lambda entry: entry.defaults_file,
        names=lambda cmdline, mark: mark in " ".join(cmdline),
        stop=_stop,
    ),
    quote_identifier=lambda name: "`" + name.replace("`", "``") + "`",
    profiles_example="e.g. smoke or in-transit",
    ways="encbench.servers.mariadb.ways",
    option_file=True,
    load_clients=("sysbench",),
    sysbench_connection=sysbench.connection_args,
    server_processes=("mariadbd", "mysqld"),
)
