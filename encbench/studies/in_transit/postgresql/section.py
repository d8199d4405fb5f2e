"""The PostgreSQL in-transit study's part of the report: per test, a table of plain against
TLS transactions per second (pgbench's own figure) with the paired cost and its verdict, a
plot of the cost per row; the rows at a distance apart, with the cost per path and round-trip
time (as the MariaDB in-transit report); and how the set-up and the proof were made."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from encbench.report import pgbench_part, plots
from encbench.report.cells import flagged_cost, rounds_text, verdict_notes
from encbench.report.models import NoiseFloor, Record
from encbench.report.tables import Block, Bullets, Cell, Paragraph, Plot, Section, Table
from encbench.studies.in_transit import proof_lines
from encbench.studies.in_transit.postgresql.models import PgInTransitSummary, PgTransitCellSummary
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

TEST_TITLES = {
    "connect_select1": "New connections: connect, SELECT 1, disconnect (pgbench -C)",
    "connect_select_only": "New connections: one select-only transaction each (pgbench -C -S)",
    "select_only": "Queries on persistent connections: select-only (pgbench -S)",
    "copy": "Bulk: COPY … TO STDOUT through psql, a new connection per copy",
}
# What a row's transactions are, where they are not pgbench's.
UNITS = {"copy": "copies/s"}
INTRO = (
    "Each row pairs the same pgbench against one PostgreSQL server with `sslmode=disable` "
    "(plain) and with the row's sslmode (TLS), in alternating rounds. Transactions per "
    "second are pgbench's own (with -C including each connection's set-up), means over "
    "rounds with their 95% CI; 'lost to TLS' is the paired cost with its 95% CI, positive "
    "when TLS is slower, as in the verdict."
)
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
DISTANCE_TITLE = "Rate lost to TLS, by network distance"
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
# The kernel counts CPU in 10 ms ticks: below this total, a per-transaction figure is rounding.
CPU_RESOLUTION_S = 0.2

Cells = Sequence[PgTransitCellSummary]


def path_name(cell: PgTransitCellSummary) -> str:
    return f"{cell.sslmode}, {cell.key_type}, {cell.tls_version}"


def _cpu(cell: PgTransitCellSummary) -> str:
    assert cell.variants is not None
    p, e = cell.variants.plain, cell.variants.encrypted
    totals = [v.server_cpu_ms_per_txn * v.transactions / 1000 for v in (e, p)]
    if min(totals) < CPU_RESOLUTION_S:
        return "too little CPU to resolve"
    return f"{e.server_cpu_ms_per_txn:.3f} / {p.server_cpu_ms_per_txn:.3f}"


def cells_table(
    cells: Cells, part: PgInTransitSummary, caption: str | None = None, notes: Sequence[str] = ()
) -> Table:
    far = any(c.rtt_ms for c in cells)
    cpu = _cpu if part.target is None else lambda c: "not measured on a target"
    rows = [
        pgbench_part.tps_row(
            c,
            [path_name(c), *([f"{c.rtt_ms:g}"] if far else []), str(c.clients), rounds_text(c)],
            [cpu],
        )
        for c in cells
    ]
    unit = UNITS.get(cells[0].test, "tps")
    header = [
        "TLS side (sslmode, key, protocol)",
        *(["RTT ms"] if far else []),
        "clients",
        "rounds",
        f"plain {unit} (95% CI)",
        f"TLS {unit} (95% CI)",
        "lost to TLS (95% CI)",
        "verdict",
        f"server CPU ms per {'copy' if cells[0].test == 'copy' else 'transaction'}, TLS / plain",
    ]
    notes = [*verdict_notes([c.comparisons.get("tps") for c in cells], part.differences), *notes]
    return Table(header, rows, caption, notes)


def distance_table(cells: Cells) -> Table:
    """The share of the rate lost to TLS, path × round-trip time, for the tests measured at
    a distance (their loopback rows included): how the cost of TLS changes as the link
    grows, as the MariaDB in-transit report's table by distance."""
    tests = {c.test for c in cells if c.rtt_ms > 0}
    measured = [c for c in cells if c.test in tests]
    rtts = sorted({c.rtt_ms for c in measured})
    by_path = {(c.test, path_name(c), c.clients, c.rtt_ms): c for c in measured}
    paths = list(dict.fromkeys((c.test, path_name(c), c.clients) for c in measured))
    header = ["test", "TLS side (sslmode, key, protocol)", "clients"]
    header += [f"RTT {rtt:g} ms" for rtt in rtts]
    rows = []
    for test, path, clients in paths:
        line = [Cell(test), Cell(path), Cell(str(clients))]
        for rtt in rtts:
            cell = by_path.get((test, path, clients, rtt))
            comp = cell.comparisons.get("tps") if cell and cell.rounds else None
            line.append(Cell(flagged_cost(comp), comp.kind) if comp else Cell("–", "na"))
        rows.append(line)
    return Table(header, rows, "Share of the rate lost to TLS (95% CI), by round-trip time")


def distance_section(part: PgInTransitSummary) -> Section | None:
    """The rows at a distance: the table by distance, then each test's rows at a distance."""
    far = [c for c in part.cells if c.rtt_ms > 0]
    if not far:
        return None
    relay = "relay" in (part.delay_method or {}).values()
    notes = [RELAY_NOTE] if relay else []
    blocks: list[Block] = [Paragraph(DISTANCE_NOTE), distance_table(part.cells)]
    for test, title in TEST_TITLES.items():
        group = [c for c in far if c.test == test]
        if group:
            blocks.append(cells_table(group, part, f"At a distance: {title}", notes))
    missing = list(dict.fromkeys(c.status for c in far if not c.rounds))
    if missing:
        blocks.append(Bullets(missing))
    return Section(DISTANCE_TITLE, blocks, level=3)


def _cost_svg(cells: Cells, title: str, test: str) -> str | None:
    measured = [c for c in cells if c.comparisons.get("tps")]
    return plots.cost_rows_svg(
        [f"{path_name(c)}, {c.clients} cl" for c in measured],
        [("tps", [c.comparisons["tps"] for c in measured])],
        title.split(":")[0],
        f"pg-transit-{test}",
        xlabel="share of the rate lost to TLS (%)",
    )


def copy_note(part: PgInTransitSummary) -> str:
    """What one copy streams, so that copies per second read as MiB per second."""
    table = part.bulk_table or {}
    mib = float(table.get("bytes", 0)) / 2**20
    return (
        f"Each copy streams the whole table, {int(table.get('rows', 0)):,} rows of random hex, "
        f"{mib:,.1f} MiB as COPY's text, through a new connection of psql, which reads every "
        f"row and drops it: copies/s × {mib:,.1f} is MiB/s, and the share lost to TLS is the "
        "same in either."
    )


def sections(part: PgInTransitSummary, noise: NoiseFloor | None = None) -> list[Section]:
    blocks: list[Block] = [Paragraph(INTRO)]
    summary = pgbench_part.summary_items(part, noise, PgTransitRecord.STUDY)
    if summary:
        blocks.append(Bullets(summary))
    for test, title in TEST_TITLES.items():
        group = [c for c in part.cells if c.test == test and c.rtt_ms == 0]
        if not group:
            continue
        plot = Plot(partial(_cost_svg, group, title, test), f"{title}: cost of TLS per row")
        parts: list[Block] = [Paragraph(CONNECT_NOTE)] if test.startswith("connect_") else []
        if test == "copy":
            parts.append(Paragraph(copy_note(part)))
        blocks.append(Section(title, [*parts, cells_table(group, part), plot], level=3))
    far = distance_section(part)
    if far is not None:
        blocks.append(far)
    blocks.append(Section("PostgreSQL in-transit setup and proof", [Bullets(setup(part))], 3))
    title = "PostgreSQL in transit: what TLS costs new connections and queries"
    return [Section(title, blocks)]


def target_setup(part: PgInTransitSummary, target: Record) -> list[str]:
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


def setup(part: PgInTransitSummary) -> list[str]:
    if part.target is not None:
        return [*target_setup(part, part.target), *_proven_lines(part), TARGET_NOT_MEASURED]
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
    if part.link:
        methods = ", ".join(f"{rtt} ms by {how}" for rtt, how in (part.delay_method or {}).items())
        out.append(
            f"Hosts: the server in a network namespace at {part.link.get('server')}, the "
            f"clients of the rows at a distance in another at {part.link.get('client')}, "
            f"joined by a veth pair" + (f"; delays: {methods}." if methods else ".")
        )
    for key, info in (part.pki or {}).items():
        out.append(f"PKI {key}: {info['server_key']}; {info['chain']}.")
    out.append(PROOF_NOTE)
    seen = [words for c in part.cells for words in (c.wire or {}).values()]
    if any(not words.startswith("not captured") for words in seen):
        out.append(WIRE_NOTE)
    return [*out, *_proven_lines(part), NOT_MEASURED]


def _proven_lines(part: PgInTransitSummary) -> list[str]:
    """What each row's proof saw, the transactions pgbench failed, encbench's own CPU."""
    out = []
    out += proof_lines.negotiated(part.cells)
    wire = [
        f"{c.label}: {'; '.join(f'{k}: {v}' for k, v in c.wire.items())}"
        for c in part.cells
        if c.wire
    ]
    if wire:
        out.append("On the wire: " + " — ".join(wire) + ".")
    out += proof_lines.counted(
        part.cells, "failed", "Transactions pgbench counted as failed", "TLS"
    )
    h = part.harness
    if h.measured_wall_s:
        out.append(
            f"encbench's own CPU during the measured windows: {h.cpu_s:.2f} s over "
            f"{h.measured_wall_s:.0f} s measured ({h.share_of_machine_pct:.2f}% of the machine)."
        )
    return out
