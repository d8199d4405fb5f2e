"""PostgreSQL: postgres sandboxes (servers/pg_sandbox.py) with no encryption of its own at
rest (the filesystem layer under it: fscrypt), TLS by the server's ssl settings, pgbench as
the load, and a target reached by postgresql:// with the password from libpq's own places."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import psutil

from encbench import environment, proc
from encbench.server_kind import Sandboxed, ServerKind, TargetWays
from encbench.servers import pg_readiness, pg_sandbox, pg_target

# The postmaster's own shutdown modes, as `pg_ctl stop -m fast` and `-m immediate` send them
# (SIGTERM would be "smart": it waits for every client to leave).  Sent to the postmaster
# alone: SIGINT to a backend cancels its query, and the postmaster stops its children.
POSTGRESQL_STOP = ((signal.SIGINT, 30.0), (signal.SIGQUIT, 10.0))
PASSWORD_FIX = "give the password in PGPASSWORD or in a password file (PGPASSFILE, ~/.pgpass)"


def _stop(server: psutil.Process) -> None:
    """The postmaster alone, then whatever is left of its process group (backends of a
    postmaster killed outright)."""
    proc.stop_group(server, POSTGRESQL_STOP, group=False)
    proc.kill_group(server.pid)


def _installed_version() -> str | None:
    found = pg_sandbox.bindir()
    if found is None:
        return None
    return environment.tool_version([str(found / "postgres"), "--version"], r"\)\s+(\S+)")


def _ownership(spec: Any, databases: list[str], results_dir: str) -> None:
    with pg_target.login(spec) as target:
        for db in databases:
            target.ownership(db, pg_target.marker(results_dir))


def _dropper(spec: Any) -> Callable[[Any], None]:
    def drop(found: Any) -> None:
        with pg_target.login(spec) as target:
            target.drop_owned(found.database, found.marker)

    return drop


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
    # Its studies name PostgreSQL's programs in their own needs: against a target, the
    # in-transit study needs only the clients.
    installed_version=_installed_version,
    tools=list,
    sandbox=Sandboxed(
        # postgres takes its data directory as one argument (-D PATH).
        mark=lambda entry: entry.datadir,
        names=lambda cmdline, mark: mark in cmdline,
        stop=_stop,
    ),
    target=TargetWays(
        check=lambda spec, needs: pg_readiness.check(spec),
        plan_lines=lambda spec, needs, algorithm: pg_readiness.plan_lines(spec),
        ownership=_ownership,
        dropper=_dropper,
    ),
    quote_identifier=pg_target.quote_ident,
    profiles_example="e.g. postgresql",
    target_rules=_target_rules,
    load_clients=("pgbench",),
)
