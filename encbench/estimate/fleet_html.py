"""estimate.html (`encbench estimate --prometheus URL --out DIR`): the fleet's estimate as
one self-contained page (the study reports' stylesheet and inline SVG plots, no script,
nothing fetched): what it would cost in words, the fleet's extra CPU over the window, the
instances that would pay most, the spread over all instances, the table of the most
expensive, the fleet per cause, every instance's notes, the unit costs and what the
estimate leaves out.  At a thousand instances the tables show the first TABLE_ROWS and
NOTES_SHOWN per kind of note; estimate.csv holds every instance."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.estimate import fleet, fleet_plots, model
from encbench.estimate.fleet import FleetReport, InstanceEstimate
from encbench.estimate.fleet_series import FleetSeries
from encbench.estimate.report import cores_text, figure_text, rate_text
from encbench.report import html
from encbench.report.tables import (
    Block,
    Bullets,
    Cell,
    Document,
    Paragraph,
    Plot,
    Section,
    Table,
    row,
)

TABLE_ROWS = 100
NOTES_SHOWN = 50


# Each note an instance can have, by how it begins (fleet.py and prometheus.gaps word them).
def note_kinds() -> tuple[tuple[str, str, str], ...]:
    """How a note begins, its section's title, and its word in the table."""
    return (
        ("its exporter reported", "Gaps: series missing from part of the window", "gap"),
        (
            "its exporter could not reach",
            "Exporter could not reach its server at times",
            fleet.not_reached(),
        ),
        ("the server restarted", "Restarts in the window", "restarted"),
        ("no traffic", "No traffic: counters did not move", "no traffic"),
    )


def _window(r: FleetReport) -> str:
    match = f", series `{r.match}`" if r.match else ""
    return (
        f"From {r.prometheus}: the {fleet_plots.span(r.since_s)} up to {r.window_end}{match}, "
        f"in {fleet_plots.span(r.step_s)} step windows; the peak is {r.peak_is}; scope "
        f"`{r.scope}`."
    )


def _cause_cell(e: InstanceEstimate, key: str) -> str:
    c = next(c for c in e.mean.causes if c.key == key)
    return "–" if c.cores is None else cores_text(c.cores.value)


def _short_notes(notes: Sequence[str]) -> str:
    """An instance's notes in a word each: the Notes section below says them whole."""
    words = [w for start, _, w in note_kinds() for n in notes if n.startswith(start)]
    return ", ".join(words) or "–"


def top_table(r: FleetReport) -> Table:
    shown = r.instances[:TABLE_ROWS]
    rows = []
    for n, e in enumerate(shown, start=1):
        host = figure_text(e.mean.total.share_pct, kind="pct")
        if e.host_cores:
            host += f" ({e.host_cores} CPUs)"
        rows.append(
            row(
                str(n),
                e.instance,
                e.server or "?",
                figure_text(e.mean.total.cores),
                figure_text(e.peak.total.cores),
                host,
                *(_cause_cell(e, c.key) for c in model.CAUSES),
                _short_notes(e.notes),
            )
        )
    more = len(r.instances) - len(shown)
    return Table(
        header=[
            "#",
            "instance",
            "server",
            "at the mean, cores (interval)",
            "at the peak",
            "of its host's CPU in use",
            *(c.label + ("" if r.scope in c.scopes else " (not in scope)") for c in model.CAUSES),
            "notes",
        ],
        rows=rows,
        caption=(
            f"The {len(shown)} that would pay most"
            + (f" (the other {more}: estimate.csv)" if more else "")
        ),
        notes=[
            "Per cause: extra cores at the mean rate. A total's interval adds its causes' "
            "ends (each cause's quietest and busiest step window × the unit's interval). "
            "Notes: in full under Notes below."
        ],
    )


def causes_table(r: FleetReport) -> Table:
    rows = []
    for cause in model.CAUSES:
        means, peaks = [], []
        for e in r.instances:
            means += [c.cores for c in e.mean.causes if c.key == cause.key]
            peaks += [c.cores for c in e.peak.causes if c.key == cause.key]
        rows.append(
            row(
                cause.label,
                f"`{cause.counted_as}`",
                "yes" if r.scope in cause.scopes else "no",
                figure_text(model.added(means)),
                figure_text(model.added(peaks)),
            )
        )
    return Table(
        header=["cause", "counted as", f"in scope {r.scope}", "at the mean, cores", "at peaks"],
        rows=rows,
        caption="The fleet per cause (every instance's figures added)",
    )


def notes_blocks(r: FleetReport) -> list[Block]:
    blocks: list[Block] = []
    for start, title, _ in note_kinds():
        said = [(e.instance, n) for e in r.instances for n in e.notes if n.startswith(start)]
        if not said:
            continue
        items = [f"{name}: {note}" for name, note in said[:NOTES_SHOWN]]
        if len(said) > NOTES_SHOWN:
            items.append(f"and {len(said) - NOTES_SHOWN} more (estimate.csv's notes column)")
        blocks += [Section(f"{title} ({len(said)})", [Bullets(items)], level=3)]
    if r.no_counters:
        items = r.no_counters[:NOTES_SHOWN]
        more = len(r.no_counters) - len(items)
        blocks.append(
            Section(
                f"Not estimated: no counters of their server ({len(r.no_counters)})",
                [
                    Paragraph(
                        f"Their exporter could not reach the server ({fleet.not_reached()}) or the "
                        "counters are missing: "
                        + ", ".join(items)
                        + (f" and {more} more (estimate.csv)" if more else "")
                        + "."
                    )
                ],
                level=3,
            )
        )
    return blocks or [Paragraph("None: every instance was scraped throughout, with traffic.")]


def units_table(r: FleetReport) -> Table:
    return Table(
        header=["unit", "µs (interval)", "how", "from"],
        rows=[
            row(
                f"{u.what} ({u.configuration})",
                f"{rate_text(u.us)} ({rate_text(u.low_us)}–{rate_text(u.high_us)})",
                f"{u.kind}: {u.basis}",
                f"{u.source}, {u.measured_on}",
            )
            for u in r.units
        ]
        or [[Cell("none stored"), Cell(""), Cell(""), Cell("")]],
    )


def _over_time(r: FleetReport, series: FleetSeries | str) -> Block:
    if isinstance(series, str):
        return Paragraph(f"No time series of the fleet: {series}.")
    return Plot(
        lambda: fleet_plots.series_svg(series, r.fleet),
        f"The fleet's extra CPU at every {fleet_plots.span(series.step_s)} step (the sum over "
        "the instances, computed in Prometheus), the band the unit cost's interval; the dashed "
        "line the window's mean, the instances' means added.",
    )


def document(r: FleetReport, series: FleetSeries | str) -> Document:
    """The page; `series` is the fleet's over the window, or why there is none."""
    plots: list[Block] = [
        _over_time(r, series),
        Plot(
            lambda: fleet_plots.ranked_svg(r.instances),
            "Bars: extra cores at the window's mean rates, with their interval; diamonds: at "
            "the instance's own peak. The hatched bar adds up every instance below the first "
            f"{fleet_plots.TOP_BARS}.",
        ),
        Plot(
            lambda: fleet_plots.distribution_svg(r.instances),
            "Left: the share of the instances whose extra CPU is at or below a value (instances "
            "at 0 are where the curves start). Right: the share of the fleet's total the most "
            "expensive instances hold.",
        ),
    ]
    return Document(
        title="What encryption would cost this fleet",
        intro=[Paragraph(_window(r)), Paragraph(" ".join(r.words)), *plots],
        sections=[
            Section("The instances that would pay most", [top_table(r), causes_table(r)]),
            Section("Notes", notes_blocks(r)),
            Section("The unit costs (this machine's)", [units_table(r)]),
            Section("What this leaves out", [Bullets(r.leaves_out)]),
        ],
    )


def render(r: FleetReport, series: FleetSeries | str) -> str:
    return html.render(document(r, series))
