"""An encrypted side that comes out better where encryption only adds work.

Encryption puts a cipher on top of the same server or path doing the same thing: it can make
throughput lower, times longer and CPU higher, never the reverse (results/schema.Metric's
`cannot_improve`).  A significant gain there (report/models.Estimate's `implausible_gain`) is
therefore no effect of encryption but a difference between the two sides that the pairing did
not cancel, and the same difference can hide in, or add to, a cost measured beside it.  The
study's summary says so once, with the likely causes and this machine's noise floor to judge
the size by; its tables mark each such verdict with ⚠ (report/cells.verdict_text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from encbench.report.calibration_section import noise_floor_words
from encbench.report.cells import IMPLAUSIBLE_MARK
from encbench.report.models import Differences, Estimate, NoiseFloor

# What differs between the two sides besides encryption, per kind of study.
SERVERS = (
    "the two server processes themselves or where they ran (their CPUs and memory, the state "
    "of their caches and files; servers restarted only per regime keep such a difference "
    "through every block)"
)
PATHS = (
    "the two client processes and connections or where they ran (the CPUs the client, the "
    "server's threads and any tunnel landed on)"
)
CLUSTERS = "the two clusters' processes or where they ran (their CPUs and memory)"


def gain_words(comp: Estimate) -> str:
    """The gain as the verdict puts it, without its interval: "5.5% faster"."""
    return comp.verdict.split(" (")[0]


def implausible_items(labelled: Iterable[tuple[str, Any]], flagged: Mapping[str, str]) -> list[str]:
    """Each (label, cell) where the encrypted side came out better in a figure encryption
    only adds work to (`flagged`: metric → its words), with those figures:
    "oltp_read_only, in-memory, 16 threads: throughput 5.5% faster, …"."""
    items = []
    for label, cell in labelled:
        figures = [
            f"{words} {gain_words(comp)}"
            for metric, words in flagged.items()
            if cell.rounds and (comp := cell.comparisons.get(metric)) and comp.implausible_gain
        ]
        if figures:
            items.append(f"{label}: {', '.join(figures)}")
    return items


def faster_warning(found: Sequence[str], sides: str, noise: NoiseFloor | None, study: str) -> str:
    """The summary's bullet for the flagged cells (`found`, each "where: what"), or "" when
    there are none: what it cannot be, what it likely is, and the noise floor to judge by."""
    if not found:
        return ""
    return (
        f"**Encrypted faster {IMPLAUSIBLE_MARK}**: {'; '.join(found)}. Encryption only adds "
        "work, so a significantly better encrypted side is not its effect but a difference "
        f"between the two sides: most likely {sides}, or other load during the run that fell "
        "on one side more than the other. The same difference can hide in, or add to, a cost "
        f"measured in the same run. {noise_floor_words(noise, study)}"
    )


def summary_items(
    differences: Differences | None,
    found: Sequence[str],
    sides: str,
    noise: NoiseFloor | None,
    study: str,
) -> list[str]:
    """A study's summary bullets, in the order every study gives them: which cells differ,
    before and after Holm; the cells whose encrypted side came out better (`found`:
    implausible_items); the rounds measured again."""
    items = [f"Across cells: {differences.sentence()}"] if differences else []
    warning = faster_warning(found, sides, noise, study)
    items += [warning] if warning else []
    if differences:
        items.append(f"Interference: {differences.remeasured()}")
    return items
