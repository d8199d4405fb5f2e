"""report.html: report.md's content with plots, in one self-contained file (inline CSS and SVG,
no script, nothing fetched), so that it can be mailed or archived and still open.

The text and tables come from markdown.py itself (its tables are parsed back into rows, and
its prose sections converted), so the HTML cannot drift from report.md; this module only adds
layout, the plots and marks on the verdicts: ▲ encryption costs, ▼ encrypted is cheaper,
= no measurable difference, ? inconclusive.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from encbench import capacity
from encbench.report import markdown, plots

MARKS = {"cost": "▲", "gain": "▼", "same": "=", "unsure": "?", "na": "–"}
LEGEND = (
    '<p class="legend"><span class="cost"><b>▲</b> encryption costs (95% CI excludes 0)</span> '
    '<span class="gain"><b>▼</b> encrypted is cheaper</span> '
    '<span class="same"><b>=</b> no measurable difference</span> '
    '<span class="unsure"><b>?</b> inconclusive: more rounds needed</span></p>'
)
CSS = """
body{font:14px/1.45 "DejaVu Sans",system-ui,sans-serif;color:#1b1b1b;background:#fff;
  max-width:1240px;margin:20px auto;padding:0 16px}
h1{font-size:21px;margin:0 0 12px}
h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:3px;margin:28px 0 10px}
h3{font-size:14px;margin:16px 0 6px}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0 10px}
th,td{border:1px solid #cfcfcf;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f2f2f2;font-weight:600}
td.num{text-align:right;white-space:nowrap}
.cost{background:#f9d3c8}.gain{background:#d5ecd0}.same{background:#e7ebf0}
.unsure{background:#fbefbf}.na{color:#777}.differs{background:#e6def3;font-weight:600}
.mark{font-weight:700;margin-right:3px}
.legend span{padding:1px 6px;margin-right:6px;border-radius:3px;white-space:nowrap}
.row{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
.grow{flex:1 1 520px;min-width:0}.side{flex:0 1 470px}
figure+figure{margin-top:10px}
.scroll{overflow-x:auto}
figure{margin:0}
figcaption{font-size:12px;color:#555;max-width:470px}
svg{max-width:100%;height:auto}
code{font-size:12px;background:#f4f4f4;padding:0 2px}
ul{padding-left:20px}li{margin:2px 0}
"""
_NUMERIC = re.compile(r"[-+−–—0-9.,%×±()… /]+")


def page(title: str, body: str) -> str:
    """A complete HTML document around `body` (already HTML) with encbench's stylesheet."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def inline(text: str) -> str:
    """Escaped text with Markdown's `code` and **bold**, the only inline marks encbench uses."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def md_table(text: str) -> tuple[list[str], list[list[str]]]:
    """A Markdown table as markdown.py writes it (pipes inside cells are not escaped) as header
    and rows; a stray pipe in a value is folded into the row's last cell, not a new column."""
    lines = [line.strip().strip("|") for line in text.strip().splitlines()]
    header = [cell.strip() for cell in lines[0].split("|")]
    rows = [[cell.strip() for cell in line.split("|", len(header) - 1)] for line in lines[2:]]
    return header, rows


def table_html(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    kinds: Sequence[Mapping[int, str]] | None = None,
) -> str:
    """An HTML table; `kinds[row][column]` marks a cell as cost, gain, same, unsure or na (with
    a sign), or gives it another CSS class (no sign)."""
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{inline(h)}</th>" for h in header)]
    out.append("</tr></thead><tbody>")
    for r, row in enumerate(rows):
        cells = []
        for c, text in enumerate(row):
            kind = kinds[r].get(c) if kinds else None
            if kind:
                mark = MARKS.get(kind)
                shown = f'<span class="mark" aria-hidden="true">{mark}</span> ' if mark else ""
                cells.append(f'<td class="{kind}">{shown}{inline(text)}</td>')
            elif _NUMERIC.fullmatch(text):
                cells.append(f'<td class="num">{inline(text)}</td>')
            else:
                cells.append(f"<td>{inline(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def md_to_html(md: str) -> str:
    """The Markdown subset that markdown.py and crypto.render_markdown write: headings,
    paragraphs, `- ` lists and tables."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if not block:
            return
        if block[0].startswith("|"):
            out.append(table_html(*md_table("\n".join(block))))
        elif block[0].startswith("- "):
            items = "\n".join(f"<li>{inline(line[2:])}</li>" for line in block)
            out.append(f"<ul>\n{items}\n</ul>")
        else:
            out.append(f"<p>{inline(' '.join(block))}</p>")
        block.clear()

    for line in md.splitlines():
        heading = re.match(r"(#{1,6}) (.*)", line)
        in_list = bool(block) and block[0].startswith("- ")
        if heading:
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif not line.strip():
            flush()
        elif in_list and not line.startswith("- "):
            block[-1] += " " + line.strip()  # a list item wrapped onto the next line
        elif block and not in_list and line.startswith("- "):
            flush()
            block.append(line)
        else:
            block.append(line)
    flush()
    return "\n".join(out)


def figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    return f"<figure>\n{svg}\n<figcaption>{html.escape(caption)}</figcaption>\n</figure>"


def verdict_kind(comp: Mapping[str, Any] | None) -> str:
    """cost, gain, same or unsure, from a summary.json comparison entry."""
    if comp is None:
        return "na"
    verdict = str(comp["verdict"])
    if verdict.startswith("inconclusive"):
        return "unsure"
    if verdict.startswith("no measurable difference"):
        return "same"
    return "cost" if comp["overhead_pct"] > 0 else "gain"


def _sections(md: str) -> tuple[str, dict[str, str]]:
    """report.md's title and its `## ` sections by heading."""
    title, sections, current = "", {}, ""
    for line in md.splitlines():
        if line.startswith("# "):
            title = line[2:]
        elif line.startswith("## "):
            current = line[3:]
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return title, sections


def glance(groups: Mapping[tuple[str, str], list[dict[str, Any]]]) -> str:
    """Every cell's overhead on one screen, marked, before the details."""
    threads = sorted({int(c["threads"]) for cells in groups.values() for c in cells})
    header = ["workload", "regime", "cost of encryption (%) in", *(f"{t} thr" for t in threads)]
    rows, kinds = [], []
    for (workload, regime), cells in groups.items():
        by_threads = {int(c["threads"]): c for c in cells}
        for metric, what in (("tps", "throughput"), ("cpu_ms_per_txn", "server CPU per txn")):
            row, kind = [workload, regime, what], {}
            for i, t in enumerate(threads, start=3):
                cell = by_threads.get(t)
                comp = cell["comparisons"][metric] if cell and cell["rounds"] else None
                row.append(f"{comp['overhead_pct']:+.1f}%" if comp else "not measured")
                kind[i] = verdict_kind(comp)
            rows.append(row)
            kinds.append(kind)
    return table_html(header, rows, kinds)


def group_section(workload: str, regime: str, cells: list[dict[str, Any]]) -> str:
    """Two columns: the seed-shaped table above the cost plot (what the verdicts say), the
    variants' own curves on the right (what they rest on); then the evidence table."""
    title = f"{workload}, {regime}"
    header, rows = md_table(markdown.throughput_table(cells))
    kinds = [{4: verdict_kind(c["comparisons"]["tps"] if c["rounds"] else None)} for c in cells]
    cost = figure(
        plots.overhead_svg(cells, title),
        "Above 0: encrypted is slower (TPS) or spends more server CPU per transaction; the "
        "same figures as the tables' overhead columns.",
    )
    tps = figure(
        plots.throughput_svg(cells, title),
        "Mean TPS of each variant; band: 95% CI of that mean over rounds. The verdict compares "
        "the two within each round (paired), so it can be certain where the bands overlap.",
    )
    cpu = figure(
        plots.cpu_per_txn_svg(cells, title),
        "Server (mariadbd) CPU time per transaction, from /proc, per variant.",
    )
    out = [f"<section>\n<h2>{html.escape(title)}</h2>", '<div class="row">']
    out += [f'<div class="grow">{table_html(header, rows, kinds)}\n{cost}</div>']
    out += [f'<div class="side">{tps}\n{cpu}</div>', "</div>"]
    done = [c for c in cells if c["rounds"]]
    if done:
        header, rows = md_table(markdown.cost_table(done))
        kinds = [{5: verdict_kind(c["comparisons"]["cpu_ms_per_txn"])} for c in done]
        out.append("<h3>Cost and regime evidence</h3>")
        out.append(f'<div class="scroll">{table_html(header, rows, kinds)}</div>')
    out.append("</section>")
    return "\n".join(out)


def crypto_section(cap: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    out = [
        "<section>\n<h2>Crypto capacity of this machine</h2>",
        "<p>What this CPU encrypts per second (<code>openssl speed</code>): an upper bound "
        "for what the cipher itself can cost; a measured slowdown far above it comes from "
        "something around the crypto (copies, locks, I/O).</p>",
    ]
    algorithm = ((summary.get("servers") or {}).get("encryption") or {}).get("algorithm")
    if algorithm in capacity.SERVER_CIPHERS:
        cipher, direction = capacity.SERVER_CIPHERS[algorithm]
        mb = capacity.cipher_mb_per_s(cap, cipher, capacity.PAGE_BYTES, direction=direction)
        if mb:
            us = capacity.PAGE_BYTES / (mb * 1e6) * 1e6
            out.append(
                f"<p>The server's {html.escape(algorithm)} is {html.escape(cipher)} "
                f"({html.escape(direction)}): {mb:,.0f} MB/s on one core, i.e. "
                f"{us:.1f} µs of CPU per 16 KiB page.</p>"
            )
    out.append(figure(plots.crypto_svg(cap), "One core; hatched: AES-NI off. MB = 10⁶ bytes."))
    out.append(md_to_html(capacity.render_markdown(cap)))
    out.append("</section>")
    return "\n".join(out)


def transit_section(data: Mapping[str, Any]) -> str:
    """The in-transit section: its Markdown (tables, setup, proof) with a plot per test."""
    from encbench.report import transit, transit_plots

    md = "\n".join(transit.render_section(dict(data)))
    parts = []
    for block in re.split(r"(?m)^(?=### )", md):
        parts.append(md_to_html(block))
        heading = block.splitlines()[0] if block else ""
        for test, title in transit.TEST_TITLES.items():
            if heading == f"### {title}":
                cells = [c for c in data["cells"] if c["test"] == test and c["rtt_ms"] == 0]
                short = title.split(":")[0]
                parts.append(figure(transit_plots.rates_svg(cells, short, test), title))
        if heading.startswith("### Connection rate lost to TLS"):
            caption = "% of connections per second lost to TLS, by round-trip time"
            parts.append(figure(transit_plots.distance_svg(data["cells"]), caption))
    return "\n".join(parts)


def render_html(summary: dict[str, Any], crypto: dict[str, Any] | None = None) -> str:
    """The whole report as one HTML document; `crypto` is a `CryptoCapacity.to_json()`."""
    title, sections = _sections(markdown.render(summary))
    groups = markdown.groups(summary["cells"])
    body = [f"<h1>{inline(title)}</h1>"]
    if groups:
        body += ["<h2>At a glance</h2>", LEGEND, glance(groups)]
        body.append(md_to_html(sections.get("Summary", "")))
        body += [group_section(w, r, cells) for (w, r), cells in groups.items()]
    if summary.get("transit"):
        body.append(transit_section(summary["transit"]))
    if crypto:
        body.append(crypto_section(crypto, summary))
    body += ["<h2>Setup, environment and method</h2>", md_to_html(sections.get("Setup", ""))]
    return page(title.replace("`", ""), "\n".join(body))
