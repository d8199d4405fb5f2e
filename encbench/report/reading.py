"""The report's first section, "Reading this report": what a cell, a round, a block, the
interval and the verdict words mean, in plain words, and the one sign every cost has — before
a reader meets the first table."""

from __future__ import annotations

from encbench import stats
from encbench.engine import stopping_rule
from encbench.report.cells import HOLM_MARK, IMPLAUSIBLE_MARK
from encbench.report.models import Summary
from encbench.report.tables import Bullets, Legend, Section

TITLE = "Reading this report"


def margin_words(summary: Summary) -> str:
    """The equivalence margin the studies used: "±2%", or each study's where they differ."""
    margins = {
        name: differences.margin_pct
        for name, part in summary.studies.items()
        if (differences := getattr(part, "differences", None)) is not None
    }
    values = sorted(set(margins.values()))
    if len(values) > 1:
        return (
            "±m% (each study's margin: "
            + ", ".join(f"{name} ±{m:g}%" for name, m in margins.items())
            + ")"
        )
    return f"±{values[0] if values else 2.0:g}%"


def items(summary: Summary) -> list[str]:
    rounds = stopping_rule.rounds_for_interval()
    blocks = stats.fewest_blocks_for_interval()
    margin = margin_words(summary)
    return [
        "A **cell** is one combination the profile measures, such as `oltp_read_only`, "
        "io-bound, 16 threads: one row of a table. Its two sides are identical but for "
        "encryption: **plain** (no encryption) and **encrypted**.",
        "A **round** runs the cell once on each side, one right after the other. Two rounds "
        "in opposite orders (plain first, then encrypted first, or the reverse) make a "
        "**block**; a block's figure is the mean of its two rounds' ratios encrypted/plain, so "
        "a slow drift of the machine falls on both sides alike. Every interval is computed "
        "over blocks.",
        "A **cost** (the columns named overhead, cost, change or lost to encryption) is how "
        "much worse the encrypted side is, in percent of plain. **Positive means the "
        "encrypted side is worse**: fewer transactions or connections per second, longer "
        "times, more CPU or bytes; negative means it came out better. The tables, the verdicts "
        "and their intervals, the plots, `summary.json` (`overhead_pct`, `overhead_ci_pct`) "
        "and `encbench compare` all use this one sign.",
        "The **interval** (95% CI, in brackets after a cost) is the range of costs the "
        "measurements are consistent with: intervals made this way hold the true cost 95 "
        f"times in 100. It needs at least {blocks} blocks ({rounds} rounds); a cell with "
        "fewer has no interval and no verdict.",
        "The **verdict** in words: “8.1% slower” (or higher, longer) — the whole interval "
        "lies above zero: encryption costs; “8.1% faster” (or lower, shorter) — the whole "
        f"interval lies below zero; “no difference beyond {margin}” — a test of equivalence "
        "(two one-sided tests: the 90% interval lies within the margin) shows any cost is "
        "smaller than that; “no difference detected” — neither: the interval still holds "
        "both no cost and one beyond the margin, and more rounds would narrow it; “no "
        f"verdict: 8 rounds, an interval needs {rounds}” — too few rounds to say anything.",
        f"Marks after a verdict: **{HOLM_MARK}** the cell still differs after Holm's "
        "adjustment for the number of cells in its study (with many cells some differ by "
        f"chance alone; only {HOLM_MARK} cells support a claim); **{IMPLAUSIBLE_MARK}** the "
        "encrypted side came out better where encryption only adds work, which is a "
        "difference between the two sides, not encryption's (the summary says what it likely "
        "is).",
    ]


def section(summary: Summary) -> Section:
    """The section, with the key to the verdicts' colours in HTML."""
    return Section(TITLE, [Bullets(items(summary)), Legend()])
