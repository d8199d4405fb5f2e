"""Which in-transit cells a profile asks for, in the order they are measured.

Cells are grouped by the server's TLS configuration (key type, cipher), because changing it
means restarting the server; within a group the cells run as listed.  The key type matters
for setting up connections, not for what a persistent connection costs per query, so the
per-query, bulk and dump tests use the first key type only, and the distance sweep is done
for the connection test (the seed's second table).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from encbench import estimates
from encbench.profile import Profile
from encbench.studies.in_transit.options import TransitSpec, transit_options
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
    if cell.rtt_ms > 0:
        return (
            "the distance to the user's server is what it is; emulated distances need two "
            "hosts encbench makes"
        )
    if cell.cipher:
        return (
            "a TLS 1.2 cipher is chosen on the server (ssl_cipher), which encbench does not "
            "change on a server it did not start"
        )
    return None


def _profile_cells(profile: Profile) -> list[TransitCell]:
    if "in-transit" not in profile.studies:
        return []
    t = transit_options(profile)
    found: list[TransitCell] = []
    first_key = t.key_types[0]
    if "tls" in t.methods:
        for key in t.key_types:
            if "connect" in t.tests:
                found += [
                    TransitCell("connect", "tls", key, "", rtt, threads)
                    for rtt in t.rtt_ms
                    for threads in t.connect_threads
                ]
        for test in QUERY_TESTS:
            if test in t.tests:
                found += [TransitCell(test, "tls", first_key, "", 0, n) for n in t.query_threads]
        if "bulk" in t.tests:
            found += [
                TransitCell("bulk", "tls", first_key, c, 0, 1) for c in t.bulk_ciphers or [""]
            ]
        if "dump" in t.tests:
            found.append(TransitCell("dump", "tls", first_key, "", 0, 1))
    tunnels = [("stunnel", "", r) for r in t.stunnel_resume] if "stunnel" in t.methods else []
    tunnels += [("ssh", c, False) for c in t.ssh_ciphers] if "ssh" in t.methods else []
    for method, cipher, resume in tunnels:
        if "connect" in t.tests:
            found += [
                TransitCell("connect", method, t.tunnel_key_type, cipher, 0, n, resume)
                for n in t.connect_threads
            ]
        if "bulk" in t.tests:
            found.append(TransitCell("bulk", method, t.tunnel_key_type, cipher, 0, 1, resume))
    return sorted(found, key=lambda c: server_tls(c, t))


def server_tls(cell: TransitCell, spec: TransitSpec) -> tuple[str, str]:
    """(key type, TLS cipher) the server runs with for this cell.  Tunnel cells do not use the
    server's TLS; they run with the first native configuration to save a restart."""
    if cell.method == "tls":
        return cell.key_type, cell.cipher
    return spec.key_types[0], ""


def groups(
    todo: list[TransitCell], spec: TransitSpec
) -> list[tuple[tuple[str, str], list[TransitCell]]]:
    return [(k, list(g)) for k, g in groupby(todo, key=lambda c: server_tls(c, spec))]


def estimated_seconds(profile: Profile) -> float:
    t = transit_options(profile)
    return len(cells(profile)) * estimates.upper_bound_s(t, t.run_s, t.warmup_s)
