"""The in-transit proofs: per cell, the server's (or the tunnel's) view of one connection per
route; per run, counters outside the measuring client."""

from __future__ import annotations

from encbench.errors import ProofError
from encbench.net import tunnels
from encbench.servers.mariadb import tls
from encbench.studies.in_transit.cells import QUERY_TESTS
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.routes import Route


def prove_routes(
    cell: TransitCell,
    routes: dict[str, Route],
    sessions: dict[str, tls.SessionTls],
    tls_version: str,
) -> dict[str, str]:
    """What each route negotiated, proven: plain is plain, TLS is the profile's version and
    cipher (tls_version "": a user's server, whose version is recorded, not chosen), a
    tunnel's own log names its cipher.  Returns the proof for the record."""
    found: dict[str, str] = {}
    for variant, route in routes.items():
        session = sessions[variant]
        # Routes without a tunnel (plain, TLS, a calibration's plain twin): the server's view.
        if route.tunnel is None:
            tls.prove(session, encrypted=route.ssl, what=f"{cell.label}, {variant}")
            found[variant] = f"{session.version} {session.cipher}".strip() or "plain"
            if route.ssl and tls_version and session.version != tls_version:
                raise ProofError(
                    f"{cell.label}: the server negotiated {session.version}, not {tls_version}"
                )
            if route.ssl and cell.cipher and session.cipher != cell.cipher:
                raise ProofError(
                    f"{cell.label}: the server negotiated {session.cipher}, not {cell.cipher}"
                )
            continue
        # A tunnel: MariaDB sees plain TCP from the tunnel's end; the tunnel names its own
        # cipher for the session it carried.
        tls.prove(session, encrypted=False, what=f"{cell.label}, behind the tunnel")
        assert route.tunnel is not None
        count, suite = route.tunnel.sessions()
        if cell.method == "ssh":
            suite = tunnels.ssh_cipher(route.tunnel)
            if suite != cell.cipher:
                raise ProofError(f"{cell.label}: ssh negotiated {suite!r}, not {cell.cipher}")
        if count < 1 or not suite:
            raise ProofError(f"{cell.label}: the tunnel's log shows no encrypted session")
        found[variant] = f"{cell.method}: {suite}"
        if cell.method == "ssh":
            found[variant] += ssh_details(tunnels.ssh_terms(route.tunnel))
    return found


def ssh_details(terms: dict[str, str]) -> str:
    """What else the ssh tunnel negotiated, once when it opened (its key exchange is not
    repeated per connection: each connection is a channel of the one session)."""
    parts = []
    if terms.get("mac") and terms["mac"] != "<implicit>":
        parts.append(f"MAC {terms['mac']}")
    if terms.get("kex"):
        host_key = f", {terms['host_key']} host key" if terms.get("host_key") else ""
        parts.append(f"key exchange {terms['kex']}{host_key}, once per tunnel")
    return f" ({'; '.join(parts)})" if parts else ""


def check_run(record: TransitRecord, calibration: bool = False, shared: bool = False) -> None:
    """Every run checked against counters outside the measuring client: the server's
    completed handshakes, and for tunnels the tunnel's own log (stunnel's server side; for
    ssh, its client's -v log, as sshd logs nothing per channel).  In an A/A calibration both
    sides are plain: no TLS handshake and no tunnel session on either."""
    cell, variant = record.cell, record.variant
    encrypted = variant == "encrypted" and not calibration
    ssl = encrypted and cell.method == "tls"
    tunnel = encrypted and cell.method != "tls"
    handshakes, tunneled, resumed = (
        record.tls_handshakes,
        record.tunnel_handshakes,
        record.tunnel_resumed,
    )
    what = f"{cell.label}, {variant} run"
    if not tunnel and tunneled:
        raise ProofError(f"{what}: {tunneled} tunnel sessions, expected none on a plain path")
    # shared: a user's server, whose other clients' handshakes land in the same server-wide
    # counter; there a plain run is proven by its own session (Ssl_cipher empty, per cell).
    if not ssl and handshakes and not shared:
        raise ProofError(f"{what}: the server counted {handshakes} TLS handshakes, expected 0")
    # connect: one connection per event; per query: one per client thread, opened at its
    # start; bulk (one thread) and dump (mariadb-dump): at least one.
    expected = 1
    if cell.test in ("connect", "connect_first"):
        expected = record.events
    elif cell.test in QUERY_TESTS:
        expected = cell.threads
    if ssl and handshakes < expected:
        raise ProofError(f"{what}: {handshakes} TLS handshakes for {expected} connections expected")
    if tunnel and tunneled < expected:
        raise ProofError(f"{what}: the tunnel carried {tunneled} sessions, expected {expected}")
    if resumed and not cell.resume:
        raise ProofError(f"{what}: stunnel resumed {resumed} sessions, expected none")
