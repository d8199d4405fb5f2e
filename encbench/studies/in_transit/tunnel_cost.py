"""The in-transit report's account of the SSH tunnel's cost on new connections, against
MariaDB's own TLS and against the published study that compared the two (Percona 2013,
"MySQL encryption performance, revisited"): every figure and every comparative word comes
from the measured rows; only the published table is a constant.

Why a tunnel costs what it does: ssh runs its key exchange once, when the tunnel opens (before
any measured run), and then carries each MariaDB connection as a channel of that one session;
a TLS connection runs its own handshake, public-key work included, every time.  So the rows
compared here are the tunnel's own CPU per connection (ssh and sshd together, tunnel_cpu_s)
against the server CPU a TLS connection costs beyond a plain one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from encbench.servers.mariadb.installs import MARIADB
from encbench.studies.in_transit.models import TransitCellSummary

# The published table (connections per second, one thread, two hosts on a gigabit LAN, all
# keys 4096 bits, the default suite DHE-RSA-AES256-SHA for SSL).
PUBLISHED_TITLE = "Percona 2013, 'MySQL encryption performance, revisited'"
PUBLISHED_PLAIN = 1001.33
PUBLISHED_SSL = 22.23
PUBLISHED_SSH = {"aes256-cbc": 476.52, "aes256-ctr": 482.02}
PUBLISHED_KEY = "rsa4096"
PUBLISHED_SUITE = "DHE-RSA-AES256-SHA"
# Below this much CPU in total a per-connection figure is mostly the kernel's 10 ms ticks.
CPU_RESOLUTION_S = 0.2


@dataclass(frozen=True)
class _Row:
    cell: TransitCellSummary
    kept_pct: float  # the encrypted rate as a share of the plain one (the paired ratio)


def _measured(cells: Sequence[TransitCellSummary]) -> list[_Row]:
    return [
        _Row(c, 100 * c.comparisons["rate"].ratio)
        for c in cells
        if c.test == "connect" and c.rounds and c.variants and "rate" in c.comparisons
    ]


def _reference_tls(rows: Sequence[_Row]) -> _Row | None:
    """The TLS row nearest the published study's SSL: its key and suite, else its key, else
    the first."""
    tls = [r for r in rows if r.cell.method == "tls"]
    for wanted in ((PUBLISHED_KEY, PUBLISHED_SUITE), (PUBLISHED_KEY, None)):
        for r in tls:
            if r.cell.key_type == wanted[0] and wanted[1] in (None, r.cell.cipher):
                return r
    return tls[0] if tls else None


def _share(kept_pct: float) -> str:
    if kept_pct > 100:
        return f"{kept_pct - 100:.0f}% more than plain TCP"
    return f"{kept_pct:.1f}% of the plain rate"


def _tls_name(cell: TransitCellSummary, family: str) -> str:
    return f"{family} TLS {cell.key_type}" + (f" {cell.cipher}" if cell.cipher else "")


def _cpu_sentence(ssh: TransitCellSummary, tls: TransitCellSummary) -> str | None:
    """The tunnel's CPU per connection against a TLS connection's extra server CPU, when
    both are resolved."""
    assert ssh.variants is not None and tls.variants is not None
    tunnel = ssh.variants.encrypted.tunnel_cpu_ms_per_event.mean
    if tunnel * ssh.variants.encrypted.events / 1000 < CPU_RESOLUTION_S:
        return None
    enc, plain = tls.variants.encrypted, tls.variants.plain
    totals = [v.server_cpu_ms_per_event.total_s for v in (enc, plain)]
    if any(t is None or t < CPU_RESOLUTION_S for t in totals):
        return None
    extra = enc.server_cpu_ms_per_event.mean - plain.server_cpu_ms_per_event.mean
    if extra <= 0:
        return None
    return (
        f"Per connection the tunnel's own processes (ssh and sshd) used {tunnel:.3f} ms of "
        f"CPU; a TLS handshake with the {tls.key_type} key cost the server {extra:.3f} ms more "
        f"than a plain connect ({extra / tunnel:.1f} times the tunnel's): ssh ran its key "
        "exchange once, when the tunnel opened, and carried each connection as a channel of "
        "that session, with no public-key work of its own."
    )


def _published_sentence(ssh: _Row, tls: _Row | None) -> str:
    published = PUBLISHED_SSH.get(ssh.cell.cipher)
    ssh_there = 100 * (published or max(PUBLISHED_SSH.values())) / PUBLISHED_PLAIN
    ssl_there = 100 * PUBLISHED_SSL / PUBLISHED_PLAIN
    cipher = ssh.cell.cipher if published else "its fastest cipher"
    text = (
        f"In {PUBLISHED_TITLE} (two hosts on a LAN, 4096-bit keys) the tunnel ({cipher}) kept "
        f"{ssh_there:.0f}% of the plain rate and built-in SSL {ssl_there:.1f}%"
    )
    if tls is None:
        return text + "; no TLS row was measured here to set beside them."
    same = (ssh.kept_pct > tls.kept_pct) == (ssh_there > ssl_there)
    if same:
        return f"{text}: the same ordering as here."
    return f"{text}: here the ordering is the opposite."


def lines(cells: Sequence[TransitCellSummary], family: str = MARIADB) -> list[str]:
    """One line per round-trip time with a measured SSH connect row (its fewest threads):
    the tunnel against the TLS row nearest the published study; at loopback also where the
    CPU goes and the published figures.  [] without an SSH connect row."""
    rows = _measured(cells)
    out = []
    for rtt in sorted({r.cell.rtt_ms for r in rows if r.cell.method == "ssh"}):
        here = [r for r in rows if r.cell.rtt_ms == rtt]
        threads = min(r.cell.threads for r in here if r.cell.method == "ssh")
        here = [r for r in here if r.cell.threads == threads]
        ssh_rows = [r for r in here if r.cell.method == "ssh"]
        ssh = max(ssh_rows, key=lambda r: r.kept_pct)
        tls = _reference_tls(here)
        where = "on one host" if rtt == 0 else f"at RTT {rtt:g} ms"
        kept = ", ".join(f"{r.cell.cipher} {_share(r.kept_pct)}" for r in ssh_rows)
        text = f"SSH tunnel, new connections {where} ({threads} thr): {kept}"
        if tls is not None:
            text += f"; {_tls_name(tls.cell, family)} {_share(tls.kept_pct)}"
        text += "."
        if rtt == 0:
            cpu = _cpu_sentence(ssh.cell, tls.cell) if tls is not None else None
            text += f" {cpu}" if cpu else ""
            text += f" {_published_sentence(ssh, tls)}"
        else:
            text += (
                " Through the tunnel a connection opens a channel of the session already "
                "across the link; plain TCP and TLS each open a TCP connection across it, and "
                "TLS adds its handshake's round trips."
            )
        out.append(text)
    return out
