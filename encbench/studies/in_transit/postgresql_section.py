"""PostgreSQL's words in the in-transit study's section (section.py draws its tables and
plots for every kind alike): what its tests are, what a connect row and a copy row measure,
how its server was set up and each run proven."""

from __future__ import annotations

from encbench.report.models import Record
from encbench.studies.in_transit import proof_lines
from encbench.studies.in_transit.kind import POSTGRESQL
from encbench.studies.in_transit.models import InTransitSummary, PgServer, TransitCellSummary

TEST_TITLES = {
    "connect_select1": "New connections: connect, SELECT 1, disconnect (pgbench -C)",
    "connect_select_only": "New connections: one select-only transaction each (pgbench -C -S)",
    "select_only": "Queries on persistent connections: select-only (pgbench -S)",
    "copy": "Bulk: COPY … TO STDOUT through psql, a new connection per copy",
}

CONNECT_NOTE = (
    "Every transaction opens a new connection over loopback, authenticates (SCRAM-SHA-256, "
    "as PostgreSQL's default `password_encryption`; over TLS with channel binding), runs "
    "its statements and disconnects: each TLS transaction pays a full handshake, and the "
    "cost here is the set-up's share of a connection that does little else. An application "
    "behind a connection pool pays it once per connection: for it, the rows on persistent "
    "connections apply."
)
PROOF_NOTE = (
    "Proof: before each row, one connection per route asked the server about itself "
    "(`pg_stat_ssl` joined with `pg_stat_activity`, for the benchmark role): TLS or not, its "
    "protocol, cipher and bits. Every run was checked against the server's own log of its "
    "connections (`log_connections`): none of a plain run's was TLS, every one of a TLS "
    "run's was at the row's protocol, and at least one per transaction (-C) or per client."
)
WIRE_NOTE = (
    "Wire: each route's proof connection was made while the link its client uses was "
    "captured (AF_PACKET, the server's port only; at a distance the client's end of the "
    "link, else loopback), its query carrying a marker: on the plain route the marker "
    "crossed in clear and no TLS was asked for; on the TLS route libpq's SSLRequest came "
    "first, then the server's ServerHello at the row's protocol and TLS records, and the "
    "marker never crossed in clear, with no frame dropped."
)
NOT_MEASURED = (
    "Not measured here: the measured runs' own wire (a capture costs CPU they would pay)."
)
DISTANCE_TITLE = "PostgreSQL: rate lost to TLS, by network distance"
DISTANCE_NOTE = (
    "At a distance the server runs in a network namespace of its own and the row's clients "
    "in another, joined by a veth pair whose round-trip time is the row's; the loopback "
    "rows of such a run connect over the server's namespace's own loopback. Each new "
    "connection pays the distance in round trips: TCP's handshake, the SSLRequest, the TLS "
    "handshake (one round trip at TLSv1.3, two at TLSv1.2), the start-up and SCRAM's "
    "exchange, then each query."
)
RELAY_NOTE = (
    "Delay emulated by encbench's userspace delay relay in the client's namespace (this "
    "kernel has no netem): each chunk is forwarded half an RTT after it arrives, and the TCP "
    "handshake is charged 1.5 RTT."
)
TARGET_PROOF_NOTE = (
    "Proof: before each row, one connection per route asked the server about itself "
    "(`pg_stat_ssl` joined with `pg_stat_activity`): TLS or not, its protocol, cipher and "
    "bits. The target's own log of its connections is not readable from here, so each run's "
    "connections were counted by `pg_stat_database.sessions` of encbench's database (only the "
    "run's clients connect to it), at least one per transaction (-C) or per client; their "
    "TLS is libpq's own guarantee: `sslmode=disable` never starts TLS, `require` and "
    "`verify-full` refuse a connection without it, and the client allowed only the row's "
    "protocol version."
)
TARGET_NOT_MEASURED = (
    "Not measured against a target: the server's CPU (its processes are not on this host), "
    "other key types and TLS versions than the server's own (its certificate and settings "
    "are not encbench's to change), and a capture of the wire."
)


def copy_note(part: PgServer) -> str:
    """What one copy streams, so that copies per second read as MiB per second."""
    table = part.bulk_table or {}
    mib = float(table.get("bytes", 0)) / 2**20
    return (
        f"Each copy streams the whole table, {int(table.get('rows', 0)):,} rows of random hex, "
        f"{mib:,.1f} MiB as COPY's text, through a new connection of psql, which reads every "
        f"row and drops it: copies/s × {mib:,.1f} is MiB/s, and the share lost to TLS is the "
        "same in either."
    )


def target_setup(part: PgServer, target: Record) -> list[str]:
    """The set-up lines of a run against a server encbench did not start."""
    versions = ", ".join(target.get("tls_versions") or []) or "none"
    out = [
        f"Server: the {target.get('server', 'target')}, PostgreSQL "
        f"{part.postgresql_version or '?'}, encbench did not start it: its own certificate "
        f"and TLS settings (it accepts {versions}), not changed; pgbench's tables at scale "
        f"{part.scale} in `{target.get('database', '?')}`, the database encbench created, "
        "marked and dropped at the end.",
        "Clients: pgbench and psql (libpq) over TCP from this host, as the target's login; "
        "the TLS side allows only the row's protocol version, `verify-full` checks the "
        "server's certificate against the CA given with the target.",
    ]
    for key, info in (part.pki or {}).items():
        out.append(f"Certificate ({key}): {info['server_key']}; {info['chain']}.")
    for key, shown in (part.server_settings or {}).items():
        words = ", ".join(f"{k} = {v}" for k, v in sorted(shown.items()))
        out.append(f"The server's TLS settings ({key}), as pg_settings shows them: {words}.")
    out.append(TARGET_PROOF_NOTE)
    out += [f"Not measured: {slug} — {why}." for slug, why in (part.skipped or {}).items()]
    return out


def cells_of(summary: InTransitSummary) -> list[TransitCellSummary]:
    return [c for c in summary.cells if c.kind == POSTGRESQL]


def setup(summary: InTransitSummary, part: PgServer) -> list[str]:
    """How PostgreSQL's server was set up and each of its runs proven."""
    if part.target is not None:
        proven = _proven_lines(summary)
        return [*target_setup(part, part.target), *proven, TARGET_NOT_MEASURED]
    user = f", run as the `{part.server_user}` user" if part.server_user else ""
    out = [
        f"Server: PostgreSQL {part.postgresql_version or '?'}, one sandbox for both sides"
        f"{user}; TLS limited to one protocol version per row (`ssl_min_protocol_version` = "
        f"`ssl_max_protocol_version`), its default ciphers; pgbench's tables at scale "
        f"{part.scale}.",
        "Clients: pgbench and psql (libpq) over TCP to `localhost` at 127.0.0.1 (at a "
        "distance: the server's address across the link, or the delay relay's), one thread "
        "per client; `verify-full` checks the server's certificate against the run's CA and "
        "its name, `require` encrypts without checking it.",
    ]
    # Its own link (a run that measured it alone, before: the study's).
    link = part.link or summary.link
    if link:
        methods = ", ".join(f"{rtt} ms by {how}" for rtt, how in (part.delay_method or {}).items())
        out.append(
            f"Hosts: the server in a network namespace at {link.get('server')}, the "
            f"clients of the rows at a distance in another at {link.get('client')}, "
            f"joined by a veth pair" + (f"; delays: {methods}." if methods else ".")
        )
    for key, info in (part.pki or {}).items():
        out.append(f"PKI {key}: {info['server_key']}; {info['chain']}.")
    out.append(PROOF_NOTE)
    seen = [words for c in cells_of(summary) for words in (c.wire or {}).values()]
    if any(not words.startswith("not captured") for words in seen):
        out.append(WIRE_NOTE)
    return [*out, *_proven_lines(summary), NOT_MEASURED]


def _proven_lines(summary: InTransitSummary) -> list[str]:
    """What each row's proof saw, the transactions pgbench failed, encbench's own CPU."""
    out = []
    cells = cells_of(summary)
    out += proof_lines.negotiated(cells)
    wire = [
        f"{c.label}: {'; '.join(f'{k}: {v}' for k, v in c.wire.items())}" for c in cells if c.wire
    ]
    if wire:
        out.append("On the wire: " + " — ".join(wire) + ".")
    out += proof_lines.counted(cells, "errors", "Transactions pgbench counted as failed", "TLS")
    h = summary.harness
    # Said once, in MariaDB's lines, where its cells were measured too.
    if h.measured_wall_s and len(cells) == len(summary.cells):
        out.append(
            f"encbench's own CPU during the measured windows: {h.cpu_s:.2f} s over "
            f"{h.measured_wall_s:.0f} s measured ({h.share_of_machine_pct:.2f}% of the machine)."
        )
    return out
