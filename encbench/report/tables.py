"""The report as a document model, rendered by markdown.py to report.md and by html.py to
report.html: both render the SAME tables and text, so they cannot drift apart.

A `Section` holds its blocks in order: paragraphs, lists, tables, plots and subsections.
Plots and the verdict legend exist only in HTML; Markdown skips them.  Text may carry the two
inline marks encbench uses, `code` and **bold**; both renderers understand them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# Verdict styles: HTML marks them ▲ ▼ = ? –; any other style is a plain CSS class.
VERDICT_STYLES = ("cost", "gain", "same", "unsure", "na")


@dataclass(frozen=True)
class Cell:
    text: str
    style: str | None = None  # a verdict style (cost, gain, same, unsure, na) or a CSS class


@dataclass(frozen=True)
class Table:
    header: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    caption: str | None = None  # said before the table
    notes: Sequence[str] = ()  # paragraphs right after it


def row(*texts: str, styles: dict[int, str] | None = None) -> list[Cell]:
    """A table row of plain texts, with a style for some columns."""
    styles = styles or {}
    return [Cell(text, styles.get(i)) for i, text in enumerate(texts)]


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]


@dataclass(frozen=True)
class Plot:
    """A plot for the HTML report: drawn only when rendered (matplotlib is slow to load)."""

    draw: Callable[[], str | None]  # an inline <svg>, or None when there is nothing to draw
    caption: str


@dataclass(frozen=True)
class Legend:
    """The key to the verdict marks (HTML only): (verdict style, what it means)."""

    entries: Sequence[tuple[str, str]] = (
        ("cost", "encryption costs: the whole 95% CI above 0"),
        ("gain", "encrypted better: the whole 95% CI below 0"),
        ("same", "no difference beyond the margin (equivalence shown)"),
        ("unsure", "no difference detected: more rounds would narrow it"),
        ("na", "no verdict: too few rounds for an interval"),
    )


@dataclass(frozen=True)
class Columns:
    """Blocks side by side in HTML (the first column grows), one after another in Markdown."""

    columns: Sequence[Sequence[Block]]


@dataclass(frozen=True)
class Section:
    title: str
    blocks: Sequence[Block]
    level: int = 2
    html_only: bool = False


Block = Paragraph | Bullets | Table | Plot | Legend | Columns | Section


@dataclass(frozen=True)
class Document:
    title: str  # may carry inline marks
    sections: Sequence[Section] = field(default_factory=list)
    intro: Sequence[Block] = ()  # before the first section
