"""A document (report/tables.py) as one self-contained HTML page: inline CSS and SVG, no
script, nothing fetched, so that report.html can be mailed or archived and still open.

It renders the same tables and text as markdown.py, adds the plots, and marks the verdicts:
▲ encryption costs, ▼ encrypted better, = no difference beyond the margin, ? no difference
detected, – no verdict (tables.Legend says so on the page).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from encbench.report.tables import (
    VERDICT_STYLES,
    Block,
    Bullets,
    Cell,
    Columns,
    Document,
    Legend,
    Paragraph,
    Plot,
    Section,
    Table,
)

MARKS = {"cost": "▲", "gain": "▼", "same": "=", "unsure": "?", "na": "–"}
CSS = """
body{font:14px/1.45 "DejaVu Sans",system-ui,sans-serif;color:#1b1b1b;background:#fff;
  max-width:1240px;margin:20px auto;padding:0 16px}
h1{font-size:21px;margin:0 0 12px}
h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:3px;margin:28px 0 10px}
h3{font-size:14px;margin:16px 0 6px}
p.caption{font-weight:600;margin:12px 0 4px}
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


def render(document: Document) -> str:
    body = [f"<h1>{inline(document.title)}</h1>"]
    body += [_block(b) for b in document.intro]
    body += [_section(s) for s in document.sections]
    return page(document.title.replace("`", "").replace("**", ""), "\n".join(body))


def page(title: str, body: str) -> str:
    """A complete HTML document around `body` (already HTML) with encbench's stylesheet."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def inline(text: str) -> str:
    """Escaped text with the two inline marks of the document model: `code` and **bold**."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def table_html(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{inline(h)}</th>" for h in header)]
    out.append("</tr></thead><tbody>")
    for cells in rows:
        out.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _cell(cell: Cell) -> str:
    if cell.style in VERDICT_STYLES:
        mark = f'<span class="mark" aria-hidden="true">{MARKS[cell.style]}</span> '
        return f'<td class="{cell.style}">{mark}{inline(cell.text)}</td>'
    if cell.style:
        return f'<td class="{html.escape(cell.style)}">{inline(cell.text)}</td>'
    if _NUMERIC.fullmatch(cell.text):
        return f'<td class="num">{inline(cell.text)}</td>'
    return f"<td>{inline(cell.text)}</td>"


def figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    return f"<figure>\n{svg}\n<figcaption>{html.escape(caption)}</figcaption>\n</figure>"


def _section(section: Section) -> str:
    level = min(section.level, 6)
    out = [f"<h{level}>{inline(section.title)}</h{level}>"]
    out += [_block(b) for b in section.blocks]
    text = "\n".join(part for part in out if part)
    return f"<section>\n{text}\n</section>" if level == 2 else text


def _block(block: Block) -> str:
    match block:
        case Section():
            return _section(block)
        case Paragraph(text):
            return f"<p>{inline(text)}</p>"
        case Bullets(items):
            lines = "\n".join(f"<li>{inline(item)}</li>" for item in items)
            return f"<ul>\n{lines}\n</ul>" if items else ""
        case Table():
            out = [f'<p class="caption">{inline(block.caption)}</p>'] if block.caption else []
            out.append(f'<div class="scroll">{table_html(block.header, block.rows)}</div>')
            out += [f"<p>{inline(note)}</p>" for note in block.notes]
            return "\n".join(out)
        case Plot(draw, caption):
            return figure(draw(), caption)
        case Legend(entries):
            spans = " ".join(
                f'<span class="{style}"><b>{MARKS[style]}</b> {inline(text)}</span>'
                for style, text in entries
            )
            return f'<p class="legend">{spans}</p>'
        case Columns(columns):
            parts = []
            for i, column in enumerate(columns):
                inner = "\n".join(_block(b) for b in column)
                parts.append(f'<div class="{"grow" if i == 0 else "side"}">{inner}</div>')
            return '<div class="row">\n' + "\n".join(parts) + "\n</div>"
