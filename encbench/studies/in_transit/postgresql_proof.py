"""The in-transit proofs of PostgreSQL's cells.

Per cell: one connection per route, made by libpq with the route's settings as pgbench's
are, asks the server what it sees of itself — `pg_stat_ssl` joined with `pg_stat_activity`
for its own backend, of the benchmark role: TLS or not, the protocol, the cipher and its
bits.  Per run: the server's own log of every connection (`log_connections`: "connection
authorized: user=… SSL enabled (protocol=…, cipher=…, bits=…)"), counted over the run's
part of the log: a plain run's connections are all without TLS, a TLS run's all with the
cell's protocol, and there are at least as many as the run needed.

Per cell, too, the wire: each route's proof connection is made while the link its client
uses is captured (proof/wire.py, as the MariaDB replication and state transfer studies
capture theirs; the client's veth end at a distance, the loopback of its host otherwise),
its query carrying a marker.  The plain side's capture holds the marker in clear and
neither an SSLRequest nor a TLS handshake; the TLS side's holds libpq's SSLRequest, the
server's ServerHello at the cell's protocol, TLS records, and no marker, with no frame
dropped (an absence proves nothing otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from encbench.errors import ProofError
from encbench.servers.postgresql.sessions import Session
from encbench.studies.in_transit.records import TransitCell, TransitRecord


def prove_session(cell: TransitCell, variant: str, seen: Session) -> str:
    """The route's connection was what its variant claims; its words for the record."""
    what = f"{cell.label}, {variant}"
    if variant == "plain":
        if seen.ssl:
            raise ProofError(f"{what}: the server sees TLS ({seen.words()}) on the plain route")
        return seen.words()
    if not seen.ssl:
        raise ProofError(f"{what}: the server sees no TLS on the TLS route")
    if seen.version != cell.tls_version:
        raise ProofError(f"{what}: the server negotiated {seen.version}, not {cell.tls_version}")
    return seen.words()


def check_run(record: TransitRecord) -> None:
    """A run against the server's own log of its connections: a plain run made no TLS
    connection, a TLS run made nothing else, at the cell's protocol; and at least one
    connection per transaction (-C) or per client."""
    cell = record.cell
    what = f"{cell.label}, {record.variant} run"
    expected = record.events if cell.connects else cell.threads
    connections = record.connections or 0
    if connections < expected:
        raise ProofError(
            f"{what}: the server logged {connections} connections of the benchmark "
            f"role, expected at least {expected}"
        )
    if record.variant == "plain":
        if record.tls_handshakes:
            raise ProofError(f"{what}: {record.tls_handshakes} connections were TLS")
        return
    if record.tls_handshakes != connections:
        raise ProofError(
            f"{what}: {connections - record.tls_handshakes} of "
            f"{connections} connections were not TLS"
        )
    protocols = {part.split()[0] for part in record.negotiated.split("; ") if part}
    if protocols != {cell.tls_version}:
        raise ProofError(f"{what}: the server negotiated {record.negotiated}")


def judge_wire(cell: TransitCell, variant: str, found: Mapping[str, Any]) -> str:
    """A capture of one route's proof connection against what its variant claims (the
    module's docstring); its words for the record, or ProofError."""
    where = f"{cell.label}, {variant} route's capture"
    seen, hits, dropped = found["payload_bytes"], found["marker_hits"], found["dropped"]
    hellos = found.get("hellos") or []
    requests = found.get("postgres_ssl_requests", 0)
    if not seen:
        raise ProofError(f"{where}: no payload crossed the captured link")
    if variant == "plain":
        if not hits:
            why = f" (the capture dropped {dropped} frames)" if dropped else ""
            raise ProofError(f"{where}: the query's marker is not in clear on the wire{why}")
        if hellos or requests:
            raise ProofError(
                f"{where}: the plain route asked for TLS ({requests} SSLRequest, "
                f"{len(hellos)} ServerHello)"
            )
        return f"query text in clear ({hits} marker hits in {seen:,} bytes), no TLS"
    if not requests:
        raise ProofError(f"{where}: no PostgreSQL SSLRequest before the connection")
    protocols = {hello["protocol"] for hello in hellos}
    if protocols != {cell.tls_version}:
        named = ", ".join(sorted(protocols)) or "no ServerHello"
        raise ProofError(f"{where}: the server answered with {named}, not {cell.tls_version}")
    if hits:
        raise ProofError(f"{where}: the query's marker crossed in clear ({hits} hits)")
    if dropped:
        raise ProofError(
            f"{where}: the capture dropped {dropped} frames, so the marker's absence proves nothing"
        )
    hello = next((h for h in hellos if not h.get("retry")), hellos[0])
    # PostgreSQL up to 17 offers one key-exchange group (ssl_ecdh_curve, prime256v1 by
    # default) where OpenSSL 3's client sends an X25519 key share first: the server asks
    # again, and every TLS 1.3 connection pays one more round trip.
    retried = (
        ", after a HelloRetryRequest (the server asked for a key share of another group: one "
        "more round trip)"
        if any(h.get("retry") for h in hellos)
        else ""
    )
    return (
        f"SSLRequest, then TLS ({hello['protocol']} {hello['cipher']}{retried}, "
        f"{found.get('tls_records', 0)} TLS record segments), no query text in clear "
        f"({seen:,} bytes)"
    )
