"""A study's "What bound each cell" section: one row per measured cell with what bound it
(report/bound.py) and, in report.html, a plot of CPU and disk busy along each thread sweep."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from encbench.report import bound
from encbench.report.bound_plots import bound_svg
from encbench.report.parts import Compared
from encbench.report.tables import Block, Paragraph, Plot, Section, Table, row

RULE = (
    f"A cell is bound by **CPU** when the machine's busy and stolen CPU reached "
    f"{bound.CPU_FULL:.0%} of its cores (or, in an instance shape, the server's CPU "
    f"{bound.CPU_FULL:.0%} of its allowance); by the **disk** when the data device had a "
    f"request in flight {bound.DISK_FULL_PCT:g}% of the time or more (iostat's %util, from "
    f"/proc/diskstats); by the **IOPS cap** when, in an instance shape with one, the "
    f"server's own reads or writes a second reached {bound.IOPS_FULL:.0%} of it (its cgroup's "
    "counters: a throttled server leaves the device idle, which %util cannot show); by the "
    f"**link** when a rate-limited link carried "
    f"{bound.LINK_FULL:.0%} of its rate; by **none** when the run waited with none of them full — "
    "on round trips, locks or one thread's latency. Each figure is the median over the "
    "cell's counted runs, encrypted / no encryption. On a virtual disk 100% busy says its "
    "queue never emptied, not that it could do no more: read it with the IO/s and queue."
)


def section(study_words: str, compared: Sequence[Compared]) -> Section | None:
    """None when no cell recorded what it used (runs from before encbench recorded it)."""
    known = [c for c in compared if c.bound is not None]
    if not known:
        return None
    blocks: list[Block] = [Paragraph(RULE)]
    for group in dict.fromkeys(c.group for c in known):
        cells = [c for c in known if c.group == group]
        blocks.append(
            Table(
                [cells[0].row_header, "bound by — the figures that say so"],
                [row(c.label, c.bound.words) for c in cells if c.bound is not None],
                caption=f"**{group}**",
            )
        )
        sweep = [(c.threads, c.bound) for c in cells if c.bound is not None]
        if len({t for t, _ in sweep}) > 1 and len(sweep) == len({t for t, _ in sweep}):
            blocks.append(
                Plot(
                    functools.partial(bound_svg, sweep, group, group),
                    f"CPU and disk busy along the threads, {group}",
                )
            )
    return Section(f"What bound each cell: {study_words}", blocks)
