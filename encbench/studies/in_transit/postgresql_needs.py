"""What the PostgreSQL in-transit study needs of this machine: PostgreSQL's programs (and,
run by root, the `postgres` user to run the server as), openssl for its certificates, and a
results directory that user can reach; and its disk and memory."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from encbench.engine.machine_needs import RootNeed
from encbench.errors import BadInput
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.servers import postgresql
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.sizing import SERVER_ALLOWANCE_MB
from encbench.studies.in_transit.options import pg_transit_options

# pgbench -i: about 16 MB per unit of scale (tables and indexes); initdb's files and the
# WAL the load writes; the connection log, two lines per connection.
MB_PER_SCALE = 16
BASE_MB = 200
TARGET_MB = 50


def _server_user_check() -> Check:
    """Run by root, the server runs as `postgres` (it refuses root): that user must exist."""
    try:
        pwd.getpwnam(pg_sandbox.SERVER_OS_USER)
    except KeyError:
        return Check(
            "postgres user",
            False,
            "missing (PostgreSQL refuses to run as root)",
            f"apt-get install {postgresql.PACKAGE} (it creates the user)",
            postgresql.PACKAGE,
        )
    return Check("postgres user", True, "present: the server runs as it")


def client_checks() -> list[Check]:
    """Against a target only the clients run here: psql and pgbench."""
    found = []
    for name in pg_sandbox.CLIENT_PROGRAMS:
        try:
            found.append(Check(f"PostgreSQL's {name}", True, pg_sandbox.program(name)))
        except BadInput:
            found.append(
                Check(
                    f"PostgreSQL's {name}",
                    False,
                    "not found",
                    "apt-get install postgresql-client",
                    "postgresql-client",
                )
            )
    return found


def needs(profile: Profile) -> list[Check]:
    if profile.target is not None:
        return [*client_checks(), checks.binary("openssl", "openssl")]
    found = [pg_sandbox.programs_check(), checks.binary("openssl", "openssl")]
    if os.geteuid() == 0:
        found += [_server_user_check(), checks.binary("setpriv", "util-linux")]
    return found


def optional_tools() -> list[tuple[Check, str]]:
    return [
        (pg_sandbox.programs_check(), "for the PostgreSQL in-transit study"),
        (checks.binary("ip", "iproute2"), "for its distances (network namespaces)"),
    ]


def root(profile: Profile) -> RootNeed | None:
    """A distance (rtt_ms > 0 for a test it measures) puts the server and the client in
    network namespaces, which only root may make; without root those cells are skipped with
    the reason (and no link is captured: that needs root too)."""
    t = pg_transit_options(profile)
    if any(rtt > 0 for rtt in t.rtt_ms) and set(t.distance_tests) & set(t.tests):
        return RootNeed("network namespaces", without="the distances")
    return None


def check_out(profile: Profile, out: Path) -> None:
    """The run's sandbox goes under `out`: the server's user must be able to reach it (a
    target's server runs elsewhere, as its own user)."""
    if profile.target is None:
        pg_sandbox.check_reachable(out)


def disk_bytes(profile: Profile) -> int:
    """pgbench's tables, the copy test's table (about its stream's size again on disk, and
    the WAL that writing it leaves), the server's own files."""
    t = pg_transit_options(profile)
    if profile.target is not None:
        return TARGET_MB * 2**20  # the tables are on the target: here only the logs
    copy_mb = 2 * t.copy_mb if "copy" in t.tests else 0
    return (t.scale * MB_PER_SCALE + copy_mb + BASE_MB) * 2**20


def memory_mb(profile: Profile) -> tuple[int, str]:
    if profile.target is not None:
        return 0, "no server here: the target's memory is its own"
    buffers = pg_transit_options(profile).shared_buffers_mb
    return buffers + SERVER_ALLOWANCE_MB, (
        f"one PostgreSQL server with {buffers:,} MB of shared_buffers + "
        f"{SERVER_ALLOWANCE_MB} MB; use a smaller transit.postgresql.shared_buffers_mb"
    )
