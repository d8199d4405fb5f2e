"""The in-transit study's part of the report, every kind's cells in one section.

The tables follow Percona's 2013 study "MySQL encryption performance, revisited": connections
per second, mean and 95% CI, per key size and method; then the share of the connection rate
lost to encryption per distance; then the SSH tunnel's cost in words (tunnel_cost.py).
PostgreSQL's rows are drawn by the same tables, under its tests' titles, with its own words
(postgresql_section.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from encbench.report import suspect
from encbench.report.cells import flagged_cost, overhead_cell, verdict_notes, verdict_text
from encbench.report.models import Differences, Estimate, NoiseFloor
from encbench.report.tables import Block, Bullets, Cell, Paragraph, Plot, Section, Table, row
from encbench.servers.mariadb.installs import MARIADB
from encbench.studies.in_transit import plots as in_transit_plots
from encbench.studies.in_transit import postgresql_section as pg_words
from encbench.studies.in_transit import proof_lines, tunnel_cost
from encbench.studies.in_transit.kind import MARIADB as MARIADB_KIND
from encbench.studies.in_transit.kind import POSTGRESQL
from encbench.studies.in_transit.models import (
    InTransitSummary,
    PgServer,
    TransitCellSummary,
    TransitVariant,
)
from encbench.studies.in_transit.records import TransitRecord

TEST_TITLES = {
    "connect": "Connection setup: connect, SELECT 1, disconnect",
    "connect_first": "First logins: each connection a user's first since the cache was emptied",
    "oltp_point_select": "Per query on persistent connections: oltp_point_select",
    "oltp_read_only": "Per query on persistent connections: oltp_read_only",
    "bulk": "Bulk streaming: one large result set through one connection",
    "dump": "mariadb-dump of the data set",
}
EVENT_NAMES = {
    "connect": "connection",
    "connect_first": "connection",
    "bulk": "MiB",
    "dump": "MiB",
    "copy": "copy",
}
# The server's own TLS is named by its family ("MariaDB TLS", "MySQL TLS").
METHOD_NAMES = {"tls": "{family} TLS", "stunnel": "stunnel", "ssh": "SSH tunnel"}
FIRST_LOGIN_NOTE = (
    "MySQL's default authentication, caching_sha2_password, keeps a login in a cache after "
    "a user's first full authentication. Here every connection is the first login of a user "
    "of its own since FLUSH PRIVILEGES emptied that cache (before each run, outside its "
    "window), made by encbench's C client on the same client library as sysbench. Over "
    "plain TCP a full login sends the password encrypted with the server's RSA key (the "
    "client first asks for that key: a round trip more, and an RSA decryption on the "
    "server); over TLS it sends it in the clear inside the encrypted connection. (That RSA "
    "key is caching_sha2_password's own pair, not the TLS certificate's: it does not change "
    "with the row's key type.) FLUSH PRIVILEGES is how MySQL documents emptying the cache; "
    "no counter of the server's shows a full login, so the row's evidence that its logins "
    "were full is its own cost beside the cached rows'. The "
    "connection set-up rows, where a user logs in again, are cached logins."
)
INTRO = (
    "Each row pairs the same client over plain TCP and over the encrypted path, in "
    "alternating rounds against one server. Rates are means over rounds with their 95% CI; "
    "'lost to encryption' is the paired cost of encryption with its 95% CI, positive when "
    "the encrypted path is slower, as in the verdict."
)
CONNECT_TITLE = "Connection setup per new connection {where}: connect, SELECT 1, disconnect"
CONNECT_NOTE = (
    "Measured per new connection {where}: every transaction opens a connection, runs "
    "`SELECT 1` and closes it, so each one pays the encrypted path's whole set-up (a full TLS "
    "handshake for the server's own TLS and stunnel), and the cost here is that set-up's "
    "share of a connection that does almost nothing else. An application "
    "that keeps its connections open (a connection pool) pays the handshake once per "
    "connection, not per transaction, so almost none of this cost: for it, the per-query "
    "rows on persistent connections below are the ones that apply."
)
RELAY_NOTE = (
    "Delay emulated by encbench's userspace delay relay between the two network "
    "namespaces (this kernel has no netem): each chunk is forwarded half an RTT "
    "after it arrives, and the TCP handshake is charged 1.5 RTT."
)
PROOF_NOTE = (
    "Proof: before each row, one connection per path asked the server for its "
    "Ssl_version/Ssl_cipher (tunnels: the tunnel's own log named its cipher); every run "
    "was checked against the server's Ssl_finished_accepts (0 for plain, one per "
    "connection for TLS) and the tunnel's handshake count."
)
SSH_NOTE = (
    "SSH tunnel: a private sshd with generated keys and one cipher, and `ssh -tt -L` "
    "holding a terminal session, as a DBA's `ssh -L` with a shell open does. OpenSSH "
    "turns Nagle's algorithm off only for interactive sessions: measured with `ssh -N` "
    "instead, every forwarded connect stalled on a delayed ACK (about 23 conn/s). The "
    "ssh client logs each forwarded channel (`-v`), the per-run count of the proof."
)
STUNNEL_NOTE = (
    "stunnel: a server-side and a client-side stunnel (client verifies the server "
    "against the run's CA, TCP_NODELAY on both sockets), each handshake logged at "
    "`info` and counted (one log line per connection, inside the measured path); "
    "tunnel CPU is both stunnels' CPU."
)
REUSE_NOTE = (
    "TLS session reuse: sysbench and mariadb-dump (libmariadb) open every connection with a "
    "full handshake; libmariadb cannot offer a saved session, so the server's own TLS cannot be "
    "measured with reuse. The server's Ssl_session_cache_hits grew by {hits} over "
    "{handshakes:,} TLS handshakes in this run."
)
STUNNEL_REUSE_NOTE = (
    "stunnel's client resumes sessions by default: rows marked 'resumed' allow it ({resumed:,} "
    "of {handshakes:,} handshakes there were resumptions), the other stunnel rows refuse it "
    "(`sessionResume = no`), so each of their connections pays a full handshake."
)
# The kernel counts a process's CPU in 10 ms ticks: below this total, a per-event figure is
# mostly rounding.
CPU_RESOLUTION_S = 0.2

Cells = Sequence[TransitCellSummary]


def test_title(cell: TransitCellSummary) -> str:
    return TEST_TITLES.get(cell.test) or pg_words.TEST_TITLES.get(cell.test, cell.test)


def threads_word(cell: TransitCellSummary) -> str:
    """What the row's parallelism counts: client threads, or pgbench's clients."""
    return "thr" if cell.kind == MARIADB_KIND else "cl"


def method_name(cell: TransitCellSummary, short: bool = False, family: str = MARIADB) -> str:
    """The row's path as the report names it; family "": the server's TLS unnamed (`compare`,
    whose two sides may be two servers).  A PostgreSQL row's: its sslmode, key and protocol."""
    if cell.kind != MARIADB_KIND:
        path = f"{cell.sslmode}, {cell.key_type}, {cell.tls_version}"
        return f"TLS {path}" if short else path
    resumed = " resumed" if cell.resume else ""
    if short:  # for plot labels
        cipher = cell.cipher.split("@")[0]
        return {"tls": f"TLS {cell.key_type} {cipher}", "ssh": f"SSH {cipher}"}.get(
            cell.method, f"stunnel {cell.key_type}{resumed}"
        ).strip()
    name = METHOD_NAMES[cell.method].format(family=family).strip()
    if cell.method == "tls" and cell.key_type == "target":
        # A user's server: its own TLS and certificate, whatever its kind (MySQL's too).
        return "the target's TLS" + (f" {cell.cipher}" if cell.cipher else "")
    if cell.method == "ssh":
        return f"{name} {cell.cipher} ({cell.key_type} host key)"
    if cell.method == "stunnel":
        return f"{name} ({cell.key_type}){resumed}"
    return f"{name} {cell.key_type}" + (f" {cell.cipher}" if cell.cipher else "")


def plot_label(cell: TransitCellSummary) -> str:
    return f"{method_name(cell, short=True)}, {cell.threads} {threads_word(cell)}"


def _rate(v: TransitVariant) -> str:
    ci = v.rate.ci95
    text = f"{v.rate.mean:,.1f}"
    return f"{text} ({ci[0]:,.1f}–{ci[1]:,.1f})" if ci else text


def lost(comp: Estimate) -> str:
    """The share of the rate lost to encryption with its interval, in the overhead's sign and
    format (positive: the encrypted path is slower), ⚠ where it came out faster."""
    return flagged_cost(comp)


def _cpu(encrypted: TransitVariant, plain: TransitVariant) -> str:
    if any(v.server_cpu_ms_per_event.total_s is None for v in (encrypted, plain)):
        return "not measured"  # a target's server: its process is not on this host
    totals = [v.server_cpu_ms_per_event.total_s or 1.0 for v in (encrypted, plain)]
    if min(totals) < CPU_RESOLUTION_S:
        return "too little CPU to resolve"
    return (
        f"{encrypted.server_cpu_ms_per_event.mean:.3f} / {plain.server_cpu_ms_per_event.mean:.3f}"
    )


def method_table(
    cells: Cells,
    caption: str | None = None,
    notes: Sequence[str] = (),
    differences: Differences | None = None,
    family: str = MARIADB,
) -> Table:
    """The 2013 study's first table: rate of plain and of each method, mean and 95% CI."""
    rows = []
    far = any(c.rtt_ms for c in cells)
    for c in cells:
        where = [method_name(c, family=family), *([f"{c.rtt_ms:g}"] if far else []), f"{c.threads}"]
        if not c.rounds or c.variants is None:
            rows.append(row(*where, "–", "–", "–", c.status, "–", styles={len(where) + 3: "na"}))
            continue
        p, e, comp = c.variants.plain, c.variants.encrypted, c.comparisons["rate"]
        tunnel = f" + tunnel {e.tunnel_cpu_ms_per_event.mean:.3f}" if c.method != "tls" else ""
        rows.append(
            row(
                *where,
                _rate(p),
                _rate(e),
                overhead_cell(comp),
                verdict_text(comp),
                _cpu(e, p) + tunnel,
                styles={len(where) + 3: comp.kind},
            )
        )
    unit = cells[0].unit
    mariadb = cells[0].kind == MARIADB_KIND
    header = [
        "method" if mariadb else "TLS side (sslmode, key, protocol)",
        *(["RTT ms"] if far else []),
        "threads" if mariadb else "clients",
        f"plain {unit} (95% CI)",
        f"encrypted {unit} (95% CI)",
        "lost to encryption (95% CI)",
        "verdict",
        f"server CPU ms per {EVENT_NAMES.get(cells[0].test, 'transaction')}, encrypted / plain",
    ]
    comps = [c.comparisons.get("rate") for c in cells]
    return Table(header, rows, caption, [*verdict_notes(comps, differences), *notes])


def distance_table(cells: Cells, family: str = MARIADB) -> Table:
    """The 2013 study's second table: % of the connection rate lost, path × distance (a path
    is a key type and suite of MariaDB's TLS, or a tunnel)."""
    conn = [c for c in cells if c.test == "connect"]
    rtts = sorted({c.rtt_ms for c in conn})
    threads = sorted({c.threads for c in conn})
    name = partial(method_name, family=family)
    paths = list(dict.fromkeys(name(c) for c in conn))
    by_path = {(name(c), c.rtt_ms, c.threads): c for c in conn}
    header = ["path", *[f"RTT {r:g} ms, {n} thr" for r in rtts for n in threads]]
    rows = []
    for path in paths:
        line = [Cell(path)]
        for rtt in rtts:
            for n in threads:
                cell = by_path.get((path, rtt, n))
                comp = cell.comparisons.get("rate") if cell and cell.rounds else None
                line.append(Cell(lost(comp), comp.kind) if comp else Cell("–", "na"))
        rows.append(line)
    return Table(header, rows)


def _rates_svg(cells: Cells, title: str, test: str) -> str | None:
    return in_transit_plots.rates_svg(cells, title.split(":")[0], test, plot_label)


# The figures a gain flags (Estimate.implausible_gain), in the summary's words.
FLAGGED = {
    "rate": "rate",
    "latency_avg_ms": "average latency",
    "encryption_cpu_ms_per_event": "server and tunnel CPU per event",
}


def implausible_items(cells: Cells) -> list[str]:
    """Each cell where the encrypted path came out better in a figure encryption only adds
    work to, with those figures."""
    return suspect.implausible_items(((c.label, c) for c in cells), FLAGGED)


# A tunnel's connection stands open: a new connection through it opens a channel over that
# connection instead of crossing the distance for TCP's own handshake, so across a distance
# it can take fewer round trips than plain TCP (findings: percona-2013-ssl whole).
TUNNEL_AT_A_DISTANCE = (
    "for a tunnel across a distance, the path itself: the tunnel's connection stands open, "
    "so a new connection through it opens a channel instead of crossing the distance for "
    "TCP's own handshake, a round trip fewer per connection; else "
)


def summary_items(part: InTransitSummary, noise: NoiseFloor | None) -> list[str]:
    """The study's summary: which cells differ, before and after Holm, an encrypted path that
    came out faster (with the cause a tunnel across a distance has of its own), and the
    rounds measured again."""
    far_tunnels = [c for c in part.cells if c.method != "tls" and c.rtt_ms and c.test == "connect"]
    sides = (TUNNEL_AT_A_DISTANCE if implausible_items(far_tunnels) else "") + suspect.PATHS
    return suspect.summary_items(
        part.differences, implausible_items(part.cells), sides, noise, TransitRecord.STUDY
    )


def _connect_where(part: InTransitSummary) -> str:
    """Where the connection rows without a distance connect: loopback to encbench's own
    server, or a user's server at its own address."""
    return "over loopback" if part.target is None else "to the server"


def connect_note(part: InTransitSummary) -> str:
    """What a connection-setup row measures, and what it means for pooled connections."""
    return CONNECT_NOTE.format(where=_connect_where(part))


def sections(part: InTransitSummary, noise: NoiseFloor | None = None) -> list[Section]:
    blocks: list[Block] = [Paragraph(INTRO)]
    summary = summary_items(part, noise)
    if summary:
        blocks.append(Bullets(summary))
    kinds = list(dict.fromkeys(c.kind for c in part.cells)) or [MARIADB_KIND]
    for measured in kinds:
        own = [c for c in part.cells if c.kind == measured]
        if measured == MARIADB_KIND:
            blocks += _mariadb_blocks(part, own)
        elif part.postgresql is not None and measured == POSTGRESQL:
            blocks += _postgresql_blocks(part, part.postgresql)
        else:
            blocks += _kind_blocks(part, measured, own)
    title = "In transit: what TLS costs connections, queries and bulk transfers"
    return [Section(title, blocks)]


def _mariadb_blocks(part: InTransitSummary, cells: Cells) -> list[Block]:
    """MariaDB's and MySQL's rows: per test, by distance, the SSH tunnel's cost, set-up."""
    family = part.family
    blocks: list[Block] = []
    for test, title in TEST_TITLES.items():
        group = [c for c in cells if c.test == test and c.rtt_ms == 0]
        if not group:
            continue
        plot = Plot(partial(_rates_svg, group, title, test), title)
        table = method_table(group, differences=part.differences, family=family)
        if test == "connect":
            heading = CONNECT_TITLE.format(where=_connect_where(part))
            blocks.append(Section(heading, [Paragraph(connect_note(part)), table, plot], level=3))
        elif test == "connect_first":
            blocks.append(Section(title, [Paragraph(FIRST_LOGIN_NOTE), table, plot], level=3))
        else:
            blocks.append(Section(title, [table, plot], level=3))
    far = [c for c in cells if c.rtt_ms > 0]
    if far:
        relay = "relay" in (part.delay_method or {}).values()
        missing = list(dict.fromkeys(c.status for c in far if not c.rounds))
        distance: list[Block] = []
        if any(c.test == "connect" for c in far):
            distance += [
                distance_table(cells, family),
                Plot(
                    lambda: in_transit_plots.distance_svg(
                        cells, partial(method_name, family=family)
                    ),
                    "% of connections per second lost to encryption, by round-trip time",
                ),
            ]
        for test, title in TEST_TITLES.items():
            group = [c for c in far if c.test == test]
            if group:
                caption = f"Rates at a distance: {title}"
                distance.append(
                    method_table(
                        group,
                        caption,
                        [RELAY_NOTE] if relay else [],
                        part.differences,
                        family,
                    )
                )
        distance.append(Bullets(missing))
        blocks.append(Section("Rate lost to encryption, by network distance", distance, level=3))
    ssh_cost = tunnel_cost.lines(cells, family)
    if ssh_cost:
        blocks.append(
            Section("The SSH tunnel's cost on new connections", [Bullets(ssh_cost)], level=3)
        )
    blocks.append(Section("In-transit setup and proof", [Bullets(setup(part))], level=3))
    return blocks


def _postgresql_blocks(part: InTransitSummary, server: PgServer) -> list[Block]:
    """PostgreSQL's rows, by the same tables under its tests' titles: per test, by
    distance, then how its server was set up and each run proven."""
    cells = pg_words.cells_of(part)
    blocks: list[Block] = []
    for test, title in pg_words.TEST_TITLES.items():
        group = [c for c in cells if c.test == test and c.rtt_ms == 0]
        if not group:
            continue
        plot = Plot(partial(_rates_svg, group, title, f"pg-{test}"), title)
        words: list[Block] = []
        if test.startswith("connect_"):
            words.append(Paragraph(pg_words.CONNECT_NOTE))
        if test == "copy":
            words.append(Paragraph(pg_words.copy_note(server)))
        table = method_table(group, differences=part.differences)
        blocks.append(Section(title, [*words, table, plot], level=3))
    far = [c for c in cells if c.rtt_ms > 0]
    if far:
        relay = "relay" in (server.delay_method or {}).values()
        notes = [pg_words.RELAY_NOTE] if relay else []
        distance: list[Block] = [Paragraph(pg_words.DISTANCE_NOTE), pg_distance_table(cells)]
        for test, title in pg_words.TEST_TITLES.items():
            group = [c for c in far if c.test == test]
            if group:
                caption = f"At a distance: {title}"
                distance.append(method_table(group, caption, notes, part.differences))
        missing = list(dict.fromkeys(c.status for c in far if not c.rounds))
        if missing:
            distance.append(Bullets(missing))
        blocks.append(Section(pg_words.DISTANCE_TITLE, distance, level=3))
    lines = pg_words.setup(part, server)
    blocks.append(Section("PostgreSQL in-transit setup and proof", [Bullets(lines)], level=3))
    return blocks


def _kind_blocks(part: InTransitSummary, measured: str, cells: Cells) -> list[Block]:
    """A kind without words of its own here: its rows by test, drawn as every kind's are."""
    blocks: list[Block] = []
    for test in dict.fromkeys(c.test for c in cells):
        group = [c for c in cells if c.test == test]
        title = f"{measured}: {test_title(group[0])}"
        plot = Plot(partial(_rates_svg, group, title, f"{measured}-{test}"), title)
        table = method_table(group, differences=part.differences)
        blocks.append(Section(title, [table, plot], level=3))
    return blocks


def pg_distance_table(cells: Cells) -> Table:
    """PostgreSQL's share of the rate lost to TLS, path × round-trip time, for the tests
    measured at a distance (their loopback rows included)."""
    tests = {c.test for c in cells if c.rtt_ms > 0}
    measured = [c for c in cells if c.test in tests]
    rtts = sorted({c.rtt_ms for c in measured})
    by_path = {(c.test, method_name(c), c.threads, c.rtt_ms): c for c in measured}
    paths = list(dict.fromkeys((c.test, method_name(c), c.threads) for c in measured))
    header = ["test", "TLS side (sslmode, key, protocol)", "clients"]
    header += [f"RTT {rtt:g} ms" for rtt in rtts]
    rows = []
    for test, path, clients in paths:
        line = [Cell(test), Cell(path), Cell(str(clients))]
        for rtt in rtts:
            cell = by_path.get((test, path, clients, rtt))
            comp = cell.comparisons.get("rate") if cell and cell.rounds else None
            line.append(Cell(lost(comp), comp.kind) if comp else Cell("–", "na"))
        rows.append(line)
    return Table(header, rows, "Share of the rate lost to TLS (95% CI), by round-trip time")


def setup(part: InTransitSummary) -> list[str]:
    cells = [c for c in part.cells if c.kind == MARIADB_KIND]
    if part.target is not None:
        out = [
            f"Server: the user's own, {part.target.get('server', '?')} "
            f"({part.family} {part.mariadb_version or '?'}), for "
            "both variants; its TLS version and cipher "
            "are its own, negotiated and recorded below, not chosen by encbench. Rows that "
            "need encbench's own processes or settings there are not measured (the reason is "
            "in each row)."
        ]
        if part.cpu_measurement:
            out.append(f"Server CPU: {part.cpu_measurement}.")
    else:
        out = [
            f"Server: {part.family} {part.mariadb_version or '?'}, one sandbox for both "
            f"variants, `tls_version={part.tls_version}`, cipher chosen on the server."
        ]
        if part.install:
            out.append(
                f"From a private root ({part.install['name']}, Debian "
                f"{part.install['suite']}): its TLS is that root's OpenSSL "
                f"{part.install['openssl']}, not this host's."
            )
    notes = part.notes or {}
    for key, info in (part.pki or {}).items():
        note = f" {notes[key]}." if key in notes else ""
        out.append(f"PKI {key}: {info['server_key']}; {info['chain']}.{note}")
    if part.bulk_table:
        out.append(
            f"Bulk table: {part.bulk_table['rows']:,} rows of random bytes, "
            f"{part.bulk_table['bytes'] / 2**20:,.0f} MiB."
        )
    out.append(PROOF_NOTE)
    out += proof_lines.negotiated(cells)
    out += proof_lines.counted(
        cells, "errors", "Errors sysbench ignored and went on after", "encrypted"
    )
    h = part.harness
    if h.measured_wall_s:
        out.append(
            f"encbench's own CPU during the measured windows: {h.cpu_s:.2f} s "
            f"over {h.measured_wall_s:.0f} s measured (CPU of one core: "
            f"{100 * h.cpu_s / h.measured_wall_s:.2f}%)."
        )
    if any(c.method == "ssh" for c in cells):
        out.append(SSH_NOTE)
    stunnel = [c for c in cells if c.method == "stunnel" and c.variants]
    if stunnel:
        out.append(STUNNEL_NOTE)
        resumed = [c.variants.encrypted for c in stunnel if c.resume and c.variants]
        out.append(
            STUNNEL_REUSE_NOTE.format(
                resumed=sum(v.tunnel_resumed for v in resumed),
                handshakes=sum(v.tunnel_handshakes for v in resumed),
            )
        )
    out.append(REUSE_NOTE.format(hits=part.session_cache_hits, handshakes=part.tls_handshakes))
    return out


def calibration_setup(part: InTransitSummary) -> list[str]:
    """A calibration's Setup line of the in-transit study."""
    return [
        "In transit: one server; A and B are the same plain TCP path, each run checked "
        "against the server's Ssl_finished_accepts (0 for both)."
    ]
