"""Compare two results directories (two machines, two versions, AES_CTR against AES_CBC): does
encryption cost more in B than in A, and is the change real?

Method.  Each side's cell holds the geometric mean r of its per-round ratios encrypted/plain
and the 95% CI [lo, hi] from its n paired rounds (see encbench.stats), i.e. on the log scale
ln r ± t(0.975, n−1)·se.  So each side's standard error is
    se = (ln hi − ln lo) / (2·t(0.975, n−1)).
The two sides are independent, so d = ln r_B − ln r_A has se_d = √(se_A² + se_B²) and
Welch–Satterthwaite degrees of freedom ν = se_d⁴ / (se_A⁴/(n_A−1) + se_B⁴/(n_B−1));
t = d / se_d, two-sided p = 2·F_ν(−|t|), and the 95% CI of r_B / r_A is
exp(d ± t(0.975, ν)·se_d).  The change is significant when p < 0.05 (the CI excludes 1).
It is shown in percentage points of overhead (B − A); the test is on the ratio of ratios.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from encbench.errors import BadInput
from encbench.report import html as html_report
from encbench.report import markdown, plots
from encbench.results.schema import SUMMARY_SCHEMA

COMPARISON_SCHEMA = 1
CONFIDENCE = 0.95
METRICS = {"tps": "Throughput (TPS)", "cpu_ms_per_txn": "Server CPU per transaction"}
METHOD = (
    "per cell, each side's standard error of ln(encrypted/plain) is recovered from its 95% CI "
    "(se = (ln hi − ln lo) / (2·t(0.975, n−1))); the difference of the two log ratios is "
    "tested with Welch's t-test (Welch–Satterthwaite degrees of freedom), two-sided, at 95%; "
    "change = overhead in B − overhead in A, in percentage points"
)
Key = tuple[str, str, int]


def side_se(comp: Mapping[str, Any]) -> float | None:
    """The standard error of ln(ratio) behind a summary.json comparison's 95% CI."""
    from scipy.special import stdtrit

    n, low, high = int(comp["n"]), comp.get("ci_low"), comp.get("ci_high")
    if n < 2 or not low or not high:
        return None
    t = float(stdtrit(n - 1, 0.5 + CONFIDENCE / 2.0))
    return (math.log(high) - math.log(low)) / (2.0 * t)


def welch(comp_a: Mapping[str, Any], comp_b: Mapping[str, Any]) -> dict[str, Any]:
    """Welch's test of ln r_B − ln r_A from two summary.json comparison entries."""
    from scipy.special import stdtr, stdtrit

    d = math.log(comp_b["ratio"]) - math.log(comp_a["ratio"])
    out: dict[str, Any] = {"log_difference": d, "ratio_of_ratios": math.exp(d)}
    se_a, se_b = side_se(comp_a), side_se(comp_b)
    if se_a is None or se_b is None:
        return {**out, "significant": None, "note": "cannot tell: a side has fewer than 2 rounds"}
    se = math.hypot(se_a, se_b)
    if se == 0.0:
        return {**out, "significant": None, "note": "cannot tell: no spread on either side"}
    df = se**4 / (se_a**4 / (comp_a["n"] - 1) + se_b**4 / (comp_b["n"] - 1))
    t = d / se
    p = float(2.0 * stdtr(df, -abs(t)))
    half = float(stdtrit(df, 0.5 + CONFIDENCE / 2.0)) * se
    return {
        **out,
        "se_a": se_a,
        "se_b": se_b,
        "se": se,
        "df": df,
        "t": t,
        "p": p,
        "ratio_of_ratios_ci": [math.exp(d - half), math.exp(d + half)],
        "significant": p < 1.0 - CONFIDENCE,
        "note": None,
    }


def _side(comp: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("n", "ratio", "ci_low", "ci_high", "overhead_pct", "overhead_ci_pct", "verdict")
    return {k: comp.get(k) for k in keys}


def _cells(summary: Mapping[str, Any]) -> dict[Key, dict[str, Any]]:
    return {
        (c["workload"], c["regime"], int(c["threads"])): c
        for c in summary["cells"]
        if c.get("rounds") and "comparisons" in c
    }


def compare_cell(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"threads": int(a["threads"]), "rounds": [a["rounds"], b["rounds"]]}
    for metric in METRICS:
        ca, cb = a["comparisons"][metric], b["comparisons"][metric]
        out[metric] = {
            "a": _side(ca),
            "b": _side(cb),
            "change_pp": cb["overhead_pct"] - ca["overhead_pct"],
            **welch(ca, cb),
        }
    return out


def _setup(summary: Mapping[str, Any]) -> dict[str, str]:
    """What a reader checks first when two runs differ: what was run, where, on what."""
    servers, env = summary.get("servers") or {}, summary.get("environment") or {}
    enc, data, cpu = (
        servers.get("encryption") or {},
        servers.get("data") or {},
        env.get("cpu") or {},
    )
    pools = ", ".join(
        f"{r} {rec.get('buffer_pool_mb')} MB" for r, rec in (servers.get("regimes") or {}).items()
    )
    return {
        "profile": str(summary.get("profile", "?")),
        "encryption": f"{enc.get('algorithm', '?')}, scope {enc.get('scope', '?')}",
        "MariaDB": str(servers.get("mariadb_version") or env.get("mariadb") or "?"),
        "CPU": f"{cpu.get('model', '?')}, {cpu.get('cores', '?')} cores",
        "OpenSSL": str(env.get("openssl") or "?"),
        "kernel": str(env.get("kernel") or "?"),
        "data": f"{data['tables']} tables × {data['table_size']:,} rows" if data else "?",
        "buffer pool": pools or "?",
    }


def compare(
    summary_a: dict[str, Any], summary_b: dict[str, Any], label_a: str, label_b: str
) -> dict[str, Any]:
    """Match the cells of two summary.json by (workload, regime, threads) and test, per cell,
    whether the cost of encryption changed from A to B (TPS and server CPU per transaction)."""
    for summary, label in ((summary_a, label_a), (summary_b, label_b)):
        if summary.get("schema", SUMMARY_SCHEMA) != SUMMARY_SCHEMA:
            raise BadInput(
                f"{label}: summary.json schema {summary.get('schema')!r} is not "
                f"{SUMMARY_SCHEMA}; re-render it with `encbench report DIR` first"
            )
    cells_a, cells_b = _cells(summary_a), _cells(summary_b)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key in [*cells_a, *(k for k in cells_b if k not in cells_a)]:
        a, b = cells_a.get(key), cells_b.get(key)
        if a is not None and b is not None:
            row = compare_cell(a, b)
        else:
            only, cell = ("a", a) if a is not None else ("b", b)
            assert cell is not None
            row = {"threads": key[2], "only_in": only}
            row.update({m: {only: _side(cell["comparisons"][m])} for m in METRICS})
        groups.setdefault(key[:2], []).append(row)
    setup_a, setup_b = _setup(summary_a), _setup(summary_b)
    return {
        "kind": "encbench-comparison",
        "schema": COMPARISON_SCHEMA,
        "labels": {"a": label_a, "b": label_b},
        "method": METHOD,
        "confidence": CONFIDENCE,
        "setup": [
            {"what": k, "a": setup_a[k], "b": setup_b[k], "differs": setup_a[k] != setup_b[k]}
            for k in setup_a
        ],
        "groups": [
            {"workload": w, "regime": r, "cells": sorted(rows, key=lambda row: row["threads"])}
            for (w, r), rows in groups.items()
        ],
        "only_in_a": [list(k) for k in cells_a if k not in cells_b],
        "only_in_b": [list(k) for k in cells_b if k not in cells_a],
    }


# ----------------------------------------------------------------------------- rendering


def _significance(entry: Mapping[str, Any]) -> str:
    if entry.get("significant") is None:
        return str(entry.get("note") or "cannot tell")
    p = entry["p"]
    # Near the 5% threshold three decimals could show "no (p = 0.050)".
    digits = 4 if 0.045 <= p < 0.055 else 3
    shown = "p < 0.001" if p < 0.001 else f"p = {p:.{digits}f}"
    return f"{'yes' if entry['significant'] else 'no'} ({shown})"


def _kind(entry: Mapping[str, Any], only: str | None) -> str:
    """The verdict marks of report.html, for a change: ▲ costs more in B, ▼ less."""
    if only:
        return "na"
    if entry.get("significant") is None:
        return "unsure"
    if not entry["significant"]:
        return "same"
    return "cost" if entry["change_pp"] > 0 else "gain"


def metric_rows(
    cells: list[dict[str, Any]], metric: str, labels: Mapping[str, str]
) -> tuple[list[str], list[list[str]], list[dict[int, str]]]:
    header = [
        "Threads",
        f"overhead {labels['a']} (95% CI)",
        f"overhead {labels['b']} (95% CI)",
        "change",
        "significant?",
    ]
    rows, kinds = [], []
    for cell in cells:
        entry = cell[metric]
        only = cell.get("only_in")
        if only:
            side = markdown.overhead_cell(entry[only])
            row = [side, "not measured"] if only == "a" else ["not measured", side]
            rows.append([str(cell["threads"]), *row, "–", f"only in {labels[only]}"])
        else:
            rows.append(
                [
                    str(cell["threads"]),
                    markdown.overhead_cell(entry["a"]),
                    markdown.overhead_cell(entry["b"]),
                    f"{entry['change_pp']:+.1f} pp",
                    _significance(entry),
                ]
            )
        kinds.append({4: _kind(entry, only)})
    return header, rows, kinds


def render_markdown(comparison: dict[str, Any]) -> str:
    labels = comparison["labels"]
    out = [f"# encbench comparison: {labels['a']} (A) vs {labels['b']} (B)", ""]
    out += [
        "Overhead is the cost of encryption (positive: the encrypted server is slower, or spends "
        "more server CPU per transaction). A change is B − A in percentage points.",
        "",
        f"Method: {comparison['method']}.",
        "",
        "## Setup",
        "",
    ]
    setup = [
        [s["what"], s["a"], s["b"], "differs" if s["differs"] else ""] for s in comparison["setup"]
    ]
    out += [markdown.table(["", labels["a"], labels["b"], ""], setup), ""]
    for group in comparison["groups"]:
        out += [f"## {group['workload']}, {group['regime']}", ""]
        for metric, title in METRICS.items():
            header, rows, _ = metric_rows(group["cells"], metric, labels)
            out += [f"{title}:", "", markdown.table(header, rows), ""]
    for side in ("a", "b"):
        only = comparison[f"only_in_{side}"]
        if only:
            cells = ", ".join(f"{w} {r} {t} thr" for w, r, t in only)
            out += [f"Measured only in {labels[side]}: {cells}.", ""]
    return "\n".join(out)


def _plot(group: Mapping[str, Any], labels: Mapping[str, str]) -> str | None:
    sides = []
    for side in ("a", "b"):
        rows = [c for c in group["cells"] if side in c["tps"]]
        comps = {m: [c[m][side] for c in rows] for m in METRICS}
        sides.append(([int(c["threads"]) for c in rows], comps))
    title = f"{group['workload']}, {group['regime']}"
    return plots.comparison_svg(sides, (labels["a"], labels["b"]), title)


def render_html(comparison: dict[str, Any]) -> str:
    """The comparison as one self-contained HTML page, with a plot of both overheads."""
    labels = comparison["labels"]
    title = f"encbench comparison: {labels['a']} (A) vs {labels['b']} (B)"
    body = [f"<h1>{html.escape(title)}</h1>"]
    body.append(
        "<p>Overhead is the cost of encryption (positive: the encrypted server is slower, or "
        "spends more server CPU per transaction). A change is B − A in percentage points; "
        f"▲ costs more in {html.escape(labels['b'])}, ▼ less, = no significant change.</p>"
    )
    body.append(f"<p>Method: {html.escape(comparison['method'])}.</p>")
    setup = [[s["what"], s["a"], s["b"]] for s in comparison["setup"]]
    kinds = [{1: "differs", 2: "differs"} if s["differs"] else {} for s in comparison["setup"]]
    body += ["<h2>Setup</h2>", html_report.table_html(["", labels["a"], labels["b"]], setup, kinds)]
    for group in comparison["groups"]:
        body.append(f"<h2>{html.escape(group['workload'])}, {html.escape(group['regime'])}</h2>")
        for metric, what in METRICS.items():
            header, rows, kinds = metric_rows(group["cells"], metric, labels)
            body += [f"<h3>{what}</h3>", html_report.table_html(header, rows, kinds)]
        body.append(
            html_report.figure(
                _plot(group, labels), "Cost of encryption in A and in B; bars: 95% CI."
            )
        )
    for side in ("a", "b"):
        if comparison[f"only_in_{side}"]:
            cells = ", ".join(f"{w} {r} {t} thr" for w, r, t in comparison[f"only_in_{side}"])
            body.append(
                f"<p>Measured only in {html.escape(labels[side])}: {html.escape(cells)}.</p>"
            )
    return html_report.page(title, "\n".join(body))
