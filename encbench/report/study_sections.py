"""What studies' sections of the report say alike, written once: a section's opening (what
a round does, then what its cells' differences amount to and the rounds measured again), a
cell's headline columns in its study's main table (each variant's figure, the cost, the
verdict) and that table itself, and the bullets of a per-cell proof on the wire (one per
cell whose variants are both proven, each in the study's words; the encrypted side's capture
and ServerHello in the same words for every study whose proof captured a marker)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from encbench.report.cell_summary import CellSummary
from encbench.report.cells import TableCell, cost_verdict, verdict_notes
from encbench.report.models import Differences, Record, Sample
from encbench.report.tables import Block, Bullets, Cell, Paragraph, Section, Table, row

C = TypeVar("C", bound=CellSummary[Any])

NONE_PROVEN = "No cell has been proven yet."


def opening(intro: str, differences: Differences | None) -> list[Block]:
    """A study section's first blocks: its `intro`, then Holm's sentence over its cells and
    the rounds measured again (none before a cell is measured)."""
    blocks: list[Block] = [Paragraph(intro)]
    if differences is not None:
        blocks.append(Paragraph(differences.sentence() + " " + differences.remeasured()))
    return blocks


def headline(
    cell: TableCell,
    metric: str,
    text: Callable[[Sample], str],
    words: tuple[str, str] = ("", ""),
) -> tuple[list[str], str]:
    """A cell's columns after its label in its study's main table: the plain and the
    encrypted side's `metric` in `text`, each after its `words` ("–" before a measured
    round), the cost with its interval and the verdict; and the verdict's style."""
    variants: Any = getattr(cell, "variants", None)
    cost, verdict, kind = cost_verdict(cell, metric)
    if variants is None:
        return ["–", "–", cost, verdict], kind
    sides = (variants.plain, variants.encrypted)
    texts = [word + text(getattr(side, metric)) for word, side in zip(words, sides, strict=True)]
    return [*texts, cost, verdict], kind


def headline_table(
    cells: Sequence[C],
    metric: str,
    text: Callable[[Sample], str],
    beside: Callable[[C], list[Cell]],
    header: Sequence[str],
    caption: str,
    differences: Differences | None,
) -> Table:
    """A study's main table: per cell its label and its headline columns (`metric` in `text`),
    then the study's own columns `beside` them (as `row` makes them); under it, the notes on
    the verdicts' marks and Holm's `differences`."""
    rows = []
    for cell in cells:
        figures, kind = headline(cell, metric, text)
        rows.append(row(cell.label, *figures, styles={4: kind}) + beside(cell))
    notes = verdict_notes([c.comparisons.get(metric) for c in cells], differences)
    return Table(header, rows, caption=caption, notes=notes)


def proof_items(cells: Iterable[Any], item: Callable[[str, Record, Record], str]) -> list[str]:
    """A bullet per cell whose proof on the wire holds both variants' findings (plain,
    encrypted), in `item`'s words (its label, then each side's findings); or that none is
    proven yet."""
    items = []
    for cell in cells:
        proof = cell.proof or {}
        plain, enc = proof.get("plain") or {}, proof.get("encrypted") or {}
        if plain and enc:
            items.append(item(cell.label, plain, enc))
    return items or [NONE_PROVEN]


def proof_section(
    study_title: str, cells: Iterable[Any], item: Callable[[str, Record, Record], str]
) -> Section:
    """The subsection of a study's proof on the wire: a bullet per proven cell."""
    return Section(
        f"{study_title}: proof on the wire", [Bullets(proof_items(cells, item))], level=3
    )


def mib_captured(side: Record) -> str:
    """How much of the link a side's capture saw, in MiB."""
    return f"{side.get('payload_bytes', 0) / 2**20:,.1f} MiB"


def captured(side: Record) -> str:
    """What a side's capture saw of the link, in MiB, and the frames it dropped."""
    return f"{mib_captured(side)} captured ({side.get('dropped')} frames dropped)"


def server_hello(enc: Record) -> str:
    """The TLS handshake an encrypted side's capture saw: its protocol and suite."""
    return f"{enc.get('protocol') or '?'} {enc.get('cipher') or '?'} (the ServerHello on the wire)"


def encrypted_side(enc: Record) -> str:
    """The encrypted side of a marker proof: the marker not seen in what was captured, and
    the handshake that was."""
    return (
        f"marker seen {enc.get('marker_hits')} times in {mib_captured(enc)} "
        f"({enc.get('dropped')} dropped), {server_hello(enc)}"
    )
