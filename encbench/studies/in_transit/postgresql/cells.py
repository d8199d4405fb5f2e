"""Which PostgreSQL in-transit cells a profile asks for, in the order they are measured.

The key type matters for setting up a connection (the server signs with it in every
handshake), so `connect_select1`, whose query is trivial and whose rows are the set-up's own
cost, runs at every key type; `connect_select_only`, the per-query and the copy test at the
first.  `sslmode=verify-full` only adds the client's check of the certificate to the set-up,
so the per-query test on persistent connections and the copy test (one client, whose
connection's set-up is a small part of a copy) run at the first sslmode; the connect tests at
each.  Every test runs at every TLS version.  The tests of `distance_tests` (by default
connect_select1: a connection's set-up is round trips) run at every `rtt_ms`, the others on
loopback, as in the MariaDB in-transit study.  Cells are grouped by the server's TLS
configuration (key type, version), which is set at a restart; a distance is only the link's
delay, set per cell.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

from encbench.profiles.profile import Profile
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.postgresql.options import PgTransitSpec, pg_transit_options
from encbench.studies.in_transit.postgresql.records import PgTransitCell


def cells(profile: Profile) -> list[PgTransitCell]:
    if not kind.measures(profile, "postgresql"):
        return []
    t = pg_transit_options(profile)
    first_key, first_mode = t.key_types[0], t.sslmodes[0]
    found: list[PgTransitCell] = []
    for test in t.tests:
        rtts = distances(t, test)
        if test == "copy":
            found += [
                PgTransitCell(test, first_mode, first_key, v, 1, rtt)
                for v in t.tls_versions
                for rtt in rtts
            ]
            continue
        if test == "select_only":
            found += [
                PgTransitCell(test, first_mode, first_key, version, n, rtt)
                for version in t.tls_versions
                for rtt in rtts
                for n in t.query_clients
            ]
            continue
        key_types = t.key_types if test == "connect_select1" else [first_key]
        found += [
            PgTransitCell(test, mode, key, version, n, rtt)
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
    ordered = sorted(found, key=lambda c: order[server_tls(c)])
    return ordered if profile.target is None else on_target(ordered, first_key)


# Against a target, the TLS side uses the server's own certificate, whatever its key.
TARGET_KEY = "target"


def on_target(found: list[PgTransitCell], first_key: str) -> list[PgTransitCell]:
    """The first key type's cells are measured with the server's own certificate; the
    others stay, to be skipped with the reason, so the report says what was not measured."""
    return [replace(c, key_type=TARGET_KEY) if c.key_type == first_key else c for c in found]


def distances(spec: PgTransitSpec, test: str) -> list[float]:
    """The round-trip times a test runs at: all of rtt_ms for distance_tests, else loopback."""
    return spec.rtt_ms if test in spec.distance_tests else [0.0]


def server_tls(cell: PgTransitCell) -> tuple[str, str]:
    """(key type, TLS version) the server runs with for this cell."""
    return cell.key_type, cell.tls_version
