"""PostgreSQL: its facts.  postgres sandboxes (servers/postgresql/sandbox.py) with no encryption of
its own at rest (the filesystem layer under it: fscrypt), TLS by the server's ssl settings,
pgbench and sysbench's `pgsql` driver as the load, and a target reached by postgresql://
with the password from libpq's own places.  Its ways (a target's checks) are in
servers/postgresql/ways.py."""

from __future__ import annotations

import contextlib
import functools
import shutil
import signal
from pathlib import Path
from typing import Any

import psutil

from encbench import proc
from encbench.errors import EncbenchError
from encbench.servers.kind import Sandboxed, ServerKind
from encbench.servers.postgresql import sysbench

# The postmaster's own shutdown modes, as `pg_ctl stop -m fast` and `-m immediate` send them
# (SIGTERM would be "smart": it waits for every client to leave).  Sent to the postmaster
# alone: SIGINT to a backend cancels its query, and the postmaster stops its children.
POSTGRESQL_STOP = ((signal.SIGINT, 30.0), (signal.SIGQUIT, 10.0))
PASSWORD_FIX = "give the password in PGPASSWORD or in a password file (PGPASSFILE, ~/.pgpass)"
PROGRAMS = ("initdb", "postgres", "pg_ctl", "pgbench", "psql")
PACKAGE = "postgresql-15"  # Debian's, with every program above


def _version_key(path: Path) -> tuple[int, str]:
    name = path.parent.name
    return (int(name), name) if name.isdigit() else (0, name)


@functools.cache
def bindir() -> Path | None:
    """The directory of PostgreSQL's server programs: `pg_config --bindir` where it names one
    with a server, else the newest /usr/lib/postgresql/N/bin (Debian's layout, which keeps
    initdb and postgres off PATH).  Looked up once per process: a run starts pgbench often."""
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        with contextlib.suppress(EncbenchError):
            out = proc.run([pg_config, "--bindir"], phase="pg_config", timeout_s=30).stdout
            found = Path(out.strip())
            if all((found / name).exists() for name in PROGRAMS):
                return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key)[::-1]:
        if all((candidate / name).exists() for name in PROGRAMS):
            return candidate
    return None


def _stop(server: psutil.Process) -> None:
    """The postmaster alone, then whatever is left of its process group (backends of a
    postmaster killed outright)."""
    proc.stop_group(server, POSTGRESQL_STOP, group=False)
    proc.kill_group(server.pid)


def _installed_version() -> str | None:
    found = bindir()
    if found is None:
        return None
    return proc.tool_version([str(found / "postgres"), "--version"], r"\)\s+(\S+)")


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _target_rules(spec: Any) -> str | None:
    """What a PostgreSQL target takes: TCP (its study compares plain TCP with TLS), the
    password from libpq's own places, no server CPU over ssh (yet)."""
    if spec.socket:
        return "a PostgreSQL target is reached over TCP: give host and port"
    if spec.defaults_extra_file:
        return f"defaults_extra_file is MariaDB's; for a PostgreSQL target, {PASSWORD_FIX}"
    if spec.ssh or spec.ssh_config:
        return "ssh (the server's CPU) is not read from a PostgreSQL target yet"
    return None


KIND = ServerKind(
    name="postgresql",
    title="PostgreSQL",
    schemes=("postgresql", "postgres"),
    default_port=5432,
    # In libpq's words: the CA of the server's certificate (for sslmode=verify-full) and a
    # client certificate where the server asks for one.
    dsn_parameters={"sslrootcert": "ssl_ca", "sslcert": "ssl_cert", "sslkey": "ssl_key"},
    password_fix=PASSWORD_FIX,
    installed_version=_installed_version,
    sandbox=Sandboxed(
        # postgres takes its data directory as one argument (-D PATH).
        mark=lambda entry: entry.datadir,
        names=lambda cmdline, mark: mark in cmdline,
        stop=_stop,
    ),
    quote_identifier=quote_ident,
    profiles_example="e.g. postgresql",
    ways="encbench.servers.postgresql.ways",
    target_rules=_target_rules,
    load_clients=("pgbench",),
    sysbench_connection=sysbench.connection_args,
    server_processes=("postgres",),
)
