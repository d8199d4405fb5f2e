"""A document (report/tables.py) as Markdown: report.md, comparison.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from encbench.report.tables import (
    Block,
    Bullets,
    Columns,
    Document,
    Legend,
    Paragraph,
    Plot,
    Section,
    Table,
)


def render(document: Document) -> str:
    lines = [f"# {document.title}", ""]
    for block in document.intro:
        lines += _block(block)
    for section in document.sections:
        lines += _section(section)
    return "\n".join(lines).rstrip("\n") + "\n"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A pipe table (pipes inside values are not escaped: encbench writes none)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _section(section: Section) -> list[str]:
    if section.html_only:
        return []
    lines = ["#" * section.level + " " + section.title, ""]
    for block in section.blocks:
        lines += _block(block)
    return lines


def _block(block: Block) -> list[str]:
    match block:
        case Section():
            return _section(block)
        case Paragraph(text):
            return [text, ""]
        case Bullets(items):
            return [*(f"- {item}" for item in items), ""] if items else []
        case Table():
            lines = [f"{block.caption}:", ""] if block.caption else []
            lines += [table(block.header, ([c.text for c in r] for r in block.rows)), ""]
            for note in block.notes:
                lines += [note, ""]
            return lines
        case Columns(columns):
            return [line for column in columns for b in column for line in _block(b)]
        case Plot() | Legend():
            return []


def render_blocks(blocks: Sequence[Block]) -> str:
    """Blocks alone, without a document around them."""
    return "\n".join(line for block in blocks for line in _block(block)).rstrip("\n") + "\n"
