"""Which in-transit cells a profile asks for, in the order they are measured.

Cells are grouped by the server's TLS configuration (key type, cipher), because changing it
means restarting the server; within a group the cells run as listed.  The key type matters
for setting up connections, not for what a persistent connection costs per query, so the
per-query, bulk and dump tests use the first key type only, as do MySQL's first logins
(connect_first: connect's connections, each logging in as a user of its own right after
FLUSH PRIVILEGES emptied caching_sha2_password's cache, so every login is a full one: over
plain TCP the password goes RSA-encrypted with the server's key, over TLS in the clear
inside it).  The connect and bulk tests of
native TLS run once per suite of `ciphers` (bulk: `bulk_ciphers` where given).  The tests of
`distance_tests` (by default the connection test: the 2013 study's second table) run at
every `rtt_ms`, through every method; the others on loopback.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby, product

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.servers.mariadb import installs, tls
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.kind import POSTGRESQL
from encbench.studies.in_transit.options import (
    PgTransitSpec,
    TransitSpec,
    pg_transit_options,
    transit_options,
)
from encbench.studies.in_transit.records import TransitCell

QUERY_TESTS = ("oltp_point_select", "oltp_read_only")
# The key type of a target's TLS rows: whatever the user's server certificate has (the run
# records it as proof), not one encbench chose.
TARGET_KEY = "target"


def cells(profile: Profile) -> list[TransitCell]:
    found = _profile_cells(profile)
    if profile.target is None:
        return found
    first = transit_options(profile).key_types[0]
    # Against a user's server the TLS rows of the first key type are measured with the
    # server's own certificate; every other row stays in the list, to be skipped with its
    # reason (target_skip_reason), so the report says what was not measured and why.
    return [
        replace(c, key_type=TARGET_KEY) if c.method == "tls" and c.key_type == first else c
        for c in found
    ]


def target_skip_reason(cell: TransitCell) -> str | None:
    """Why a cell cannot be measured against a server encbench did not start, or None."""
    if cell.method != "tls":
        return (
            f"{cell.method} needs its server end beside the server, on its host, which "
            "encbench does not start processes on"
        )
    if cell.key_type != TARGET_KEY:
        return (
            "the server's certificate is the user's own (one key type, recorded as proof); "
            "other key types need certificates encbench does not install there"
        )
    if cell.test == "connect_first":
        return (
            "first logins need users of encbench's own and FLUSH PRIVILEGES before each run, "
            "which encbench does not do on a server it did not start"
        )
    if cell.rtt_ms > 0:
        return (
            "the distance to the user's server is what it is; emulated distances need two "
            "hosts encbench makes"
        )
    if cell.cipher:
        return (
            "a TLS suite is chosen on the server (ssl_cipher), which encbench does not "
            "change on a server it did not start"
        )
    return None


def sandbox_skip_reason(cell: TransitCell, profile: Profile) -> str | None:
    """Why a cell cannot be measured on encbench's own server of the profile's install, or
    None: MySQL refuses to run with a suite outside its permitted list (servers/mariadb/tls.py)."""
    if cell.method != "tls" or installs.family_of(profile.server.install) != installs.MYSQL:
        return None
    return tls.mysql_refuses(cell.cipher)


def sandbox_plan_lines(profile: Profile) -> list[str]:
    """`encbench plan`: the cells the install's server will not run, each with why."""
    return [
        f"  cell {c.label}: not measured — {why}"
        for c in cells(profile)
        if (why := sandbox_skip_reason(c, profile)) is not None
    ]


def suites(spec: TransitSpec, test: str) -> list[str]:
    """The TLS suites a native TLS test runs with, one row each ("": the server's default)."""
    if test == "connect":
        return spec.ciphers or [""]
    if test == "bulk":
        return spec.bulk_ciphers or spec.ciphers or [""]
    return [""]


def distances(spec: TransitSpec, test: str) -> list[float]:
    """The round-trip times a test runs at: all of rtt_ms for distance_tests, else loopback."""
    return spec.rtt_ms if test in spec.distance_tests else [0]


def _profile_cells(profile: Profile) -> list[TransitCell]:
    if not kind.measures(profile, "mariadb"):
        return []
    t = transit_options(profile)
    found: list[TransitCell] = []
    first_key = t.key_types[0]
    if "tls" in t.methods:
        if "connect" in t.tests:
            found += [
                TransitCell("connect", "tls", key, suite, rtt, threads)
                for key in t.key_types
                for suite in suites(t, "connect")
                for rtt in distances(t, "connect")
                for threads in t.connect_threads
            ]
        if "connect_first" in t.tests:
            found += [
                TransitCell("connect_first", "tls", first_key, "", rtt, threads)
                for rtt in distances(t, "connect_first")
                for threads in t.connect_threads
            ]
        for test in QUERY_TESTS:
            if test in t.tests:
                found += [
                    TransitCell(test, "tls", first_key, "", rtt, n)
                    for rtt in distances(t, test)
                    for n in t.query_threads
                ]
        if "bulk" in t.tests:
            found += [
                TransitCell("bulk", "tls", first_key, suite, rtt, 1)
                for suite in suites(t, "bulk")
                for rtt in distances(t, "bulk")
            ]
        if "dump" in t.tests:
            found += [
                TransitCell("dump", "tls", first_key, "", rtt, 1) for rtt in distances(t, "dump")
            ]
    tunnels = [("stunnel", "", r) for r in t.stunnel_resume] if "stunnel" in t.methods else []
    tunnels += [("ssh", c, False) for c in t.ssh_ciphers] if "ssh" in t.methods else []
    for method, cipher, resume in tunnels:
        if "connect" in t.tests:
            found += [
                TransitCell("connect", method, t.tunnel_key_type, cipher, rtt, n, resume)
                for rtt in distances(t, "connect")
                for n in t.connect_threads
            ]
        if "bulk" in t.tests:
            found += [
                TransitCell("bulk", method, t.tunnel_key_type, cipher, rtt, 1, resume)
                for rtt in distances(t, "bulk")
            ]
    return sorted(found, key=lambda c: server_tls(c, t))


def server_tls(cell: TransitCell, spec: TransitSpec) -> tuple[str, str]:
    """(key type, TLS cipher) the server runs with for this cell.  Tunnel cells do not use the
    server's TLS; they run in a configuration the native cells need anyway, to save a
    restart."""
    if cell.method == "tls":
        return cell.key_type, cell.cipher
    return spec.key_types[0], _tunnel_suite(spec)


def _tunnel_suite(spec: TransitSpec) -> str:
    """The suite of a native configuration of the first key type that the profile measures:
    the server's default where some native row uses it (or none is measured), else the first
    suite of the connect (or bulk) rows."""
    if "tls" not in spec.methods:
        return ""
    used: list[str] = []
    for test in spec.tests:
        used += suites(spec, test)
    return "" if "" in used or not used else used[0]


def groups(
    todo: list[TransitCell], spec: TransitSpec
) -> list[tuple[tuple[str, str], list[TransitCell]]]:
    return [(k, list(g)) for k, g in groupby(todo, key=lambda c: server_tls(c, spec))]


def estimated_seconds(profile: Profile) -> float:
    t = transit_options(profile)
    return len(cells(profile)) * stopping_rule.upper_bound_s(t, t.run_s, t.warmup_s)


# -- PostgreSQL ------------------------------------------------------------------------------
# Which PostgreSQL in-transit cells a profile asks for, in the order they are measured.
#
# The key type matters for setting up a connection (the server signs with it in every
# handshake), so `connect_select1`, whose query is trivial and whose rows are the set-up's own
# cost, runs at every key type; `connect_select_only`, the per-query and the copy test at the
# first.  `sslmode=verify-full` only adds the client's check of the certificate to the set-up,
# so the per-query test on persistent connections and the copy test (one client, whose
# connection's set-up is a small part of a copy) run at the first sslmode; the connect tests at
# each.  Every test runs at every TLS version.  The tests of `distance_tests` (by default
# connect_select1: a connection's set-up is round trips) run at every `rtt_ms`, the others on
# loopback, as in the MariaDB in-transit study.  Cells are grouped by the server's TLS
# configuration (key type, version), which is set at a restart; a distance is only the link's
# delay, set per cell.


def postgresql_cells(profile: Profile) -> list[TransitCell]:
    """PostgreSQL's cells (the module's doc: PostgreSQL)."""
    if not kind.measures(profile, POSTGRESQL):
        return []
    t = pg_transit_options(profile)
    first_key, first_mode = t.key_types[0], t.sslmodes[0]
    found: list[TransitCell] = []
    for test in t.tests:
        rtts = pg_distances(t, test)
        if test == "copy":
            found += [
                _pg_cell(test, first_mode, first_key, v, 1, rtt)
                for v in t.tls_versions
                for rtt in rtts
            ]
            continue
        if test == "select_only":
            found += [
                _pg_cell(test, first_mode, first_key, version, n, rtt)
                for version in t.tls_versions
                for rtt in rtts
                for n in t.query_clients
            ]
            continue
        key_types = t.key_types if test == "connect_select1" else [first_key]
        found += [
            _pg_cell(test, mode, key, version, n, rtt)
            for key in key_types
            for version in t.tls_versions
            for mode in t.sslmodes
            for rtt in rtts
            for n in t.connect_clients
        ]
    # In the profile's order of key types and versions: the first group is the one the
    # other tests share.
    order: dict[tuple[str, str], int] = {
        group: i for i, group in enumerate(product(t.key_types, t.tls_versions))
    }
    ordered = sorted(found, key=lambda c: order[pg_server_tls(c)])
    return ordered if profile.target is None else _pg_on_target(ordered, first_key)


def _pg_cell(
    test: str, sslmode: str, key_type: str, tls_version: str, clients: int, rtt_ms: float
) -> TransitCell:
    return TransitCell(
        test, "tls", key_type, "", rtt_ms, clients,
        kind=POSTGRESQL, sslmode=sslmode, tls_version=tls_version,
    )  # fmt: skip


def _pg_on_target(found: list[TransitCell], first_key: str) -> list[TransitCell]:
    """The first key type's cells are measured with the server's own certificate; the
    others stay, to be skipped with the reason, so the report says what was not measured."""
    return [replace(c, key_type=TARGET_KEY) if c.key_type == first_key else c for c in found]


def pg_distances(spec: PgTransitSpec, test: str) -> list[float]:
    """The round-trip times a test runs at: all of rtt_ms for distance_tests, else loopback."""
    return spec.rtt_ms if test in spec.distance_tests else [0.0]


def pg_server_tls(cell: TransitCell) -> tuple[str, str]:
    """(key type, TLS version) the server runs with for this cell."""
    return cell.key_type, cell.tls_version
