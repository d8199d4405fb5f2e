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

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import ProofError
from encbench.studies.in_transit.records import TransitCell, TransitRecord

SESSION_SQL = (
    "SELECT s.ssl, coalesce(s.version, ''), coalesce(s.cipher, ''), coalesce(s.bits, 0) "
    "FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid "
    "WHERE s.pid = pg_backend_pid() AND a.usename = current_user"
)
_AUTHORIZED = re.compile(r"connection authorized: user=(\S+)(.*)$", re.M)
_SSL = re.compile(r"SSL enabled \(protocol=([^,]+), cipher=([^,]+), bits=(\d+)\)")


@dataclass(frozen=True)
class Session:
    """The server's view of one connection."""

    ssl: bool
    version: str
    cipher: str
    bits: int

    def words(self) -> str:
        return f"{self.version} {self.cipher} {self.bits} bits" if self.ssl else "plain"


def parse_session(output: str) -> Session:
    rows = [line.split("\t") for line in output.splitlines() if line.strip()]
    if len(rows) != 1 or len(rows[0]) != 4:
        raise ProofError(f"pg_stat_ssl gave no row for the connection itself: {output[:200]!r}")
    ssl, version, cipher, bits = rows[0]
    return Session(ssl == "t", version, cipher, int(bits or 0))


def session_sql(marker: str = "") -> str:
    """The proof's query; with a marker (for the capture of the wire) in a comment that psql
    sends as it is (-c sends its string whole) and the server ignores."""
    return f"/* {marker} */ {SESSION_SQL}" if marker else SESSION_SQL


def session(
    psql: str, env: Mapping[str, str], log: Path, marker: str = "", prefix: Sequence[str] = ()
) -> Session:
    """One connection over the route (psql with the route's libpq settings, on the client's
    host: `prefix`), asked about itself; its output is kept in `log`."""
    sql = session_sql(marker)
    out = proc.run(
        [*prefix, psql, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        phase="prove the route (pg_stat_ssl)",
        timeout_s=60,
        stdout_path=log,
        env=env,
        hint=f"its output is in {log}",
    )
    return parse_session(out.stdout)


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


@dataclass(frozen=True)
class Logged:
    """The benchmark role's connections in a stretch of the server's log."""

    connections: int
    tls: int
    negotiated: Counter[str]

    def words(self) -> str:
        return "; ".join(sorted(self.negotiated))


def logged_connections(log_text: str, role: str) -> Logged:
    """Every "connection authorized" line of `role` in `log_text`, and the TLS of each."""
    total, tls = 0, 0
    negotiated: Counter[str] = Counter()
    for user, rest in _AUTHORIZED.findall(log_text):
        if user != role:
            continue
        total += 1
        found = _SSL.search(rest)
        if found is not None:
            tls += 1
            negotiated[f"{found[1]} {found[2]} {found[3]} bits"] += 1
    return Logged(total, tls, negotiated)


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
