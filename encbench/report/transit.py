"""The in-transit part of summary.json and report.md, built from transit.jsonl alone (plus
transit.json, the record of PKI, server TLS settings and proofs).

The tables follow the seed study (Percona, 2013): connections per second, mean and 95% CI,
per key size and method; then the share of the connection rate lost to TLS per distance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from encbench import stats
from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.markdown import table
from encbench.report.plots import mean_band
from encbench.results.schema import TransitCell, TransitRecord
from encbench.servers.variants import VARIANTS
from encbench.studies.in_transit import cells as transit_plan

METRICS: dict[str, stats.Direction] = {
    "rate": "higher_is_better",
    "latency_avg_ms": "lower_is_better",
    "encryption_cpu_ms_per_event": "lower_is_better",
}
TEST_TITLES = {
    "connect": "Connection setup: connect, SELECT 1, disconnect",
    "oltp_point_select": "Per query on persistent connections: oltp_point_select",
    "oltp_read_only": "Per query on persistent connections: oltp_read_only",
    "bulk": "Bulk streaming: one large result set through one connection",
    "dump": "mariadb-dump of the data set",
}
EVENT_NAMES = {"connect": "connection", "bulk": "MiB", "dump": "MiB"}
METHOD_NAMES = {"tls": "MariaDB TLS", "stunnel": "stunnel", "ssh": "SSH tunnel"}
REUSE_NOTE = (
    "TLS session reuse: sysbench and mariadb-dump (libmariadb) open every connection with a "
    "full handshake; libmariadb cannot offer a saved session, so MariaDB's own TLS cannot be "
    "measured with reuse. The server's Ssl_session_cache_hits grew by {hits} over "
    "{handshakes:,} TLS handshakes in this run."
)
STUNNEL_REUSE_NOTE = (
    "stunnel's client resumes sessions by default: rows marked 'resumed' allow it ({resumed:,} "
    "of {handshakes:,} handshakes there were resumptions), the other stunnel rows refuse it "
    "(`sessionResume = no`), so each of their connections pays a full handshake."
)


def _mean(records: Iterable[TransitRecord], attr: str) -> dict[str, float]:
    mean, stdev = stats.mean_and_stdev([float(getattr(r, attr)) for r in records])
    return {"mean": mean, "stdev": stdev}


def _rate_ci(records: list[TransitRecord]) -> list[float] | None:
    """The 95% CI of one variant's mean rate (t interval over rounds), as the seed's table
    gives a mean with its spread."""
    mean, stdev = stats.mean_and_stdev([r.rate for r in records])
    band = mean_band(mean, stdev, len(records))
    return list(band) if band else None


def summarize_cell(cell: TransitCell, rounds: list[plan.Round], profile: Profile) -> dict[str, Any]:
    target = profile.transit.target_halfwidth_pct
    entry: dict[str, Any] = {
        **{k: getattr(cell, k) for k in TransitCell.__dataclass_fields__},
        "label": cell.label,
        "unit": cell.unit,
        "rounds": len(rounds),
        "measured_s": sum(r.wall_s for r in rounds),
    }
    if not rounds:
        entry["status"] = "not measured"
        return entry
    entry["status"] = (
        plan.stop_reason(rounds, profile.transit, "rate")
        or "incomplete (run stopped before the cell finished)"
    )
    variants: dict[str, Any] = {}
    for v in VARIANTS:
        runs = [r.runs[v] for r in rounds]
        variants[v] = {
            "rate": {**_mean(runs, "rate"), "ci95": _rate_ci(runs)},
            "latency_avg_ms": _mean(runs, "latency_avg_ms"),
            # Totals over all rounds, not a mean of per-run values: at a distance a run holds
            # a handful of connections and the CPU clock ticks in 10 ms steps.
            "server_cpu_ms_per_event": {
                "mean": 1000 * sum(r.server_cpu_s for r in runs) / sum(r.events for r in runs),
                "total_s": sum(r.server_cpu_s for r in runs),
            },
            "tunnel_cpu_ms_per_event": {
                "mean": 1000 * sum(r.tunnel_cpu_s for r in runs) / sum(r.events for r in runs)
            },
            "encryption_cpu_ms_per_event": _mean(runs, "encryption_cpu_ms_per_event"),
            "tls_handshakes": sum(r.tls_handshakes for r in runs),
            "tunnel_handshakes": sum(r.tunnel_handshakes for r in runs),
            "tunnel_resumed": sum(r.tunnel_resumed for r in runs),
            "session_cache_hits": sum(r.session_cache_hits for r in runs),
            "events": sum(r.events for r in runs),
            "errors": sum(r.errors for r in runs),
        }
    entry["variants"] = variants
    comparisons: dict[str, Any] = {}
    for name, direction in METRICS.items():
        enc = [getattr(r.runs["encrypted"], name) for r in rounds]
        pla = [getattr(r.runs["plain"], name) for r in rounds]
        if min(enc + pla) <= 0:
            continue
        estimate = stats.paired_ratio(enc, pla)
        over, low, high = stats.overhead_pct(estimate, direction)
        comparisons[name] = {
            **estimate.to_json(),
            "overhead_pct": over,
            "overhead_ci_pct": [low, high] if estimate.n > 1 else None,
            "verdict": stats.verdict(estimate, target, direction),
        }
    entry["comparisons"] = comparisons
    runs_all = [run for r in rounds for run in r.runs.values()]
    wall = sum(r.wall_s for r in runs_all)
    other = sum(r.other_cpu_s + r.steal_s for r in runs_all)
    entry["other_load_pct_of_core"] = 100.0 * other / wall if wall > 0 else 0.0
    return entry


def build(
    runs: list[TransitRecord], profile: Profile, record: dict[str, Any] | None
) -> dict[str, Any] | None:
    every = transit_plan.cells(profile)
    if not every:
        return None
    record = record or {}
    cells = []
    for cell in every:
        entry = summarize_cell(cell, plan.complete_rounds(runs, cell), profile)
        skipped = (record.get("skipped") or {}).get(cell.slug)
        if skipped and not entry["rounds"]:
            entry["status"] = f"not measured: {skipped}"
        entry["proof"] = (record.get("proofs") or {}).get(cell.slug)
        cells.append(entry)
    t = profile.transit
    return {
        "cells": cells,
        "tls_version": t.tls_version,
        "pki": record.get("pki"),
        "server_options": record.get("server_options"),
        "delay_method": record.get("delay_method"),
        "link": record.get("link"),
        "bulk_table": record.get("bulk_table"),
        "mariadb_version": record.get("mariadb_version"),
        "notes": record.get("notes"),
        "target_halfwidth_pct": t.target_halfwidth_pct,
        "session_cache_hits": sum(r.session_cache_hits for r in runs),
        "harness_cpu_s": sum(r.harness_cpu_s for r in runs),
        "measured_wall_s": sum(r.wall_s for r in runs),
        "tls_handshakes": sum(r.tls_handshakes for r in runs),
    }


# -- Markdown ---------------------------------------------------------------------------------
def _rate(v: dict[str, Any]) -> str:
    ci = v["rate"].get("ci95")
    text = f"{v['rate']['mean']:,.1f}"
    return f"{text} ({ci[0]:,.1f}–{ci[1]:,.1f})" if ci else text


def _lost(comp: dict[str, Any]) -> str:
    ci = comp.get("overhead_ci_pct")
    text = f"{comp['overhead_pct']:.1f}%"
    return f"{text} ({ci[0]:.1f}–{ci[1]:.1f}%)" if ci else text


def method_name(cell: Mapping[str, Any], short: bool = False) -> str:
    resumed = " resumed" if cell.get("resume") else ""
    if short:  # for plot labels
        cipher = str(cell["cipher"]).split("@")[0]
        return {"tls": f"TLS {cell['key_type']} {cipher}", "ssh": f"SSH {cipher}"}.get(
            cell["method"], f"stunnel {cell['key_type']}{resumed}"
        ).strip()
    name = METHOD_NAMES[cell["method"]]
    if cell["method"] == "ssh":
        return f"{name} {cell['cipher']} ({cell['key_type']} host key)"
    if cell["method"] == "stunnel":
        return f"{name} ({cell['key_type']}){resumed}"
    return f"{name} {cell['key_type']}" + (f" {cell['cipher']}" if cell["cipher"] else "")


# The kernel counts a process's CPU in 10 ms ticks: below this total, a per-event figure is
# mostly rounding.
CPU_RESOLUTION_S = 0.2


def _cpu(encrypted: dict[str, Any], plain: dict[str, Any]) -> str:
    totals = [v["server_cpu_ms_per_event"].get("total_s", 1.0) for v in (encrypted, plain)]
    if min(totals) < CPU_RESOLUTION_S:
        return "too little CPU to resolve"
    return (
        f"{encrypted['server_cpu_ms_per_event']['mean']:.3f} / "
        f"{plain['server_cpu_ms_per_event']['mean']:.3f}"
    )


def method_table(cells: list[dict[str, Any]]) -> str:
    """The seed's first table: rate of plain and of each method, mean and 95% CI."""
    rows = []
    far = any(c["rtt_ms"] for c in cells)
    for c in cells:
        where = [method_name(c)] + ([f"{c['rtt_ms']:g}"] if far else []) + [f"{c['threads']}"]
        if not c["rounds"]:
            rows.append([*where, "–", "–", "–", c["status"], "–"])
            continue
        p, e = c["variants"]["plain"], c["variants"]["encrypted"]
        rows.append(
            [
                *where,
                _rate(p),
                _rate(e),
                _lost(c["comparisons"]["rate"]),
                c["comparisons"]["rate"]["verdict"],
                _cpu(e, p)
                + (
                    f" + tunnel {e['tunnel_cpu_ms_per_event']['mean']:.3f}"
                    if c["method"] != "tls"
                    else ""
                ),
            ]
        )
    unit = cells[0]["unit"]
    header = [
        "method",
        *(["RTT ms"] if far else []),
        "threads",
        f"plain {unit} (95% CI)",
        f"encrypted {unit} (95% CI)",
        "lost to encryption (95% CI)",
        "verdict",
        f"server CPU ms per {EVENT_NAMES.get(cells[0]['test'], 'transaction')}, encrypted / plain",
    ]
    return table(header, rows)


def distance_table(cells: list[dict[str, Any]]) -> str:
    """The seed's second table: % of the connection rate lost, key type × distance."""
    conn = [c for c in cells if c["test"] == "connect" and c["method"] == "tls"]
    rtts = sorted({c["rtt_ms"] for c in conn})
    threads = sorted({c["threads"] for c in conn})
    keys = list(dict.fromkeys(c["key_type"] for c in conn))
    header = ["key", *[f"RTT {r:g} ms, {n} thr" for r in rtts for n in threads]]
    rows = []
    for key in keys:
        row = [key]
        for rtt in rtts:
            for n in threads:
                found = [
                    c
                    for c in conn
                    if c["key_type"] == key and c["rtt_ms"] == rtt and c["threads"] == n
                ]
                cell = found[0] if found else None
                row.append(_lost(cell["comparisons"]["rate"]) if cell and cell["rounds"] else "–")
        rows.append(row)
    return table(header, rows)


def render_section(transit: dict[str, Any]) -> list[str]:
    cells = transit["cells"]
    out = ["## In transit: what TLS costs connections, queries and bulk transfers", ""]
    out += [
        "Each row pairs the same client over plain TCP and over the encrypted path, in "
        "alternating rounds against one server. Rates are means over rounds with their 95% CI; "
        "'lost' is the paired cost of encryption with its 95% CI.",
        "",
    ]
    for test, title in TEST_TITLES.items():
        group = [c for c in cells if c["test"] == test and c["rtt_ms"] == 0]
        if not group:
            continue
        out += [f"### {title}", "", method_table(group), ""]
    if any(c["rtt_ms"] > 0 for c in cells):
        out += ["### Connection rate lost to TLS, by network distance", ""]
        out += [distance_table(cells), ""]
        far = [c for c in cells if c["rtt_ms"] > 0]
        out += ["Rates at a distance:", "", method_table(far), ""]
        methods = transit.get("delay_method") or {}
        if "relay" in methods.values():
            out += [
                "Delay emulated by encbench's userspace delay relay between the two network "
                "namespaces (this kernel has no netem): each chunk is forwarded half an RTT "
                "after it arrives, and the TCP handshake is charged 1.5 RTT.",
                "",
            ]
        missing = {c["status"] for c in far if not c["rounds"]}
        out += [f"- {m}" for m in missing]
        if missing:
            out.append("")
    out += ["### In-transit setup and proof", ""]
    out.append(
        f"- Server: MariaDB {transit.get('mariadb_version') or '?'}, one sandbox for both "
        f"variants, `tls_version={transit['tls_version']}`, cipher chosen on the server."
    )
    notes = transit.get("notes") or {}
    for key, info in (transit.get("pki") or {}).items():
        note = f" {notes[key]}." if key in notes else ""
        out.append(f"- PKI {key}: {info['server_key']}; {info['chain']}.{note}")
    bulk_table = transit.get("bulk_table")
    if bulk_table:
        out.append(
            f"- Bulk table: {bulk_table['rows']:,} rows of random bytes, "
            f"{bulk_table['bytes'] / 2**20:,.0f} MiB."
        )
    out.append(
        "- Proof: before each row, one connection per path asked the server for its "
        "Ssl_version/Ssl_cipher (tunnels: the tunnel's own log named its cipher); every run "
        "was checked against the server's Ssl_finished_accepts (0 for plain, one per "
        "connection for TLS) and the tunnel's handshake count."
    )
    proofs = [
        f"{c['label']}: {', '.join(f'{k} = {v}' for k, v in c['proof'].items())}"
        for c in cells
        if c.get("proof")
    ]
    if proofs:
        out.append("- Negotiated: " + "; ".join(proofs) + ".")
    erred = [
        f"{c['label']} {v} {c['variants'][v]['errors']:,}"
        for c in cells
        if c.get("rounds")
        for v in ("plain", "encrypted")
        if c["variants"][v]["errors"]
    ]
    if erred:
        out.append("- Errors sysbench ignored and went on after: " + "; ".join(erred) + ".")
    if transit.get("measured_wall_s"):
        out.append(
            f"- encbench's own CPU during the measured windows: {transit['harness_cpu_s']:.2f} s "
            f"over {transit['measured_wall_s']:.0f} s measured (CPU of one core: "
            f"{100 * transit['harness_cpu_s'] / transit['measured_wall_s']:.2f}%)."
        )
    if any(c["method"] == "ssh" for c in cells):
        out.append(
            "- SSH tunnel: a private sshd with generated keys and one cipher, and `ssh -tt -L` "
            "holding a terminal session, as a DBA's `ssh -L` with a shell open does. OpenSSH "
            "turns Nagle's algorithm off only for interactive sessions: measured with `ssh -N` "
            "instead, every forwarded connect stalled on a delayed ACK (about 23 conn/s). The "
            "ssh client logs each forwarded channel (`-v`), the per-run count of the proof."
        )
    stunnel = [c for c in cells if c["method"] == "stunnel" and c.get("rounds")]
    if stunnel:
        out.append(
            "- stunnel: a server-side and a client-side stunnel (client verifies the server "
            "against the run's CA, TCP_NODELAY on both sockets), each handshake logged at "
            "`info` and counted (one log line per connection, inside the measured path); "
            "tunnel CPU is both stunnels' CPU."
        )
        resumed_rows = [c["variants"]["encrypted"] for c in stunnel if c.get("resume")]
        out.append(
            "- "
            + STUNNEL_REUSE_NOTE.format(
                resumed=sum(v["tunnel_resumed"] for v in resumed_rows),
                handshakes=sum(v["tunnel_handshakes"] for v in resumed_rows),
            )
        )
    out.append(
        "- "
        + REUSE_NOTE.format(
            hits=transit["session_cache_hits"], handshakes=transit["tls_handshakes"]
        )
    )
    out.append("")
    return out
