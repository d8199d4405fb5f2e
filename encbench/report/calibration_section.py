"""The calibration's part of the report (report/calibration.py computes it): for an A/A
calibration its own sections, which call the sides "A (plain)" and "B (plain twin)" and
never speak of encryption or overhead; for an ordinary run the short section stating this
machine's noise floor, or that none was measured."""

from __future__ import annotations

from encbench.report.calibration import ENOUGH_CELLS, NOMINAL_RATE, studies_of
from encbench.report.models import Calibration, NoiseFloor, Summary
from encbench.report.tables import Block, Bullets, Paragraph, Section, Table, row

INTRO = (
    "An A/A calibration: both sides of every pair ran the same plain configuration, "
    "**A (plain)** and **B (plain twin)** — at rest two identical plain servers, each proven "
    "plain; in transit plain TCP against plain TCP to one server; in a state transfer the "
    "same plain stream (SST or raw pipeline) from one donor. Each cell was judged by "
    "the same paired rounds and 95% interval as an ordinary run, so every difference found "
    "is noise: a cell whose interval of B/A excludes no difference is a false positive."
)
SPREAD_NOTE = (
    "Per-round spread: the standard deviation of ln(B/A) over a cell's rounds (×100, about "
    "the percent by which one round's B/A strays); CI half-width: the ± a cell's 95% interval "
    "reached. Both are medians over the cells of a row."
)
NONE_MEASURED = "No A/A calibration measured on this machine: run `encbench calibrate`."


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}%"


def _pm(x: float | None) -> str:
    return "–" if x is None else f"±{x:.1f}%"


def rate_in_words(c: Calibration) -> str:
    """`2 of 40 cells (5.0%, 95% CI 0.6–16.9%)`: the false-positive rate with its interval."""
    if not c.cells_tested or c.false_positive_rate is None or c.false_positive_ci is None:
        return "no cell with an interval (each needs 2 rounds)"
    low, high = c.false_positive_ci
    return (
        f"{c.false_positives} of {c.cells_tested} cells ({100 * c.false_positive_rate:.1f}%, "
        f"95% CI {100 * low:.1f}–{100 * high:.1f}%, Clopper–Pearson)"
    )


def judgement(c: Calibration) -> str:
    """What the rate says about the intervals encbench reports on this machine."""
    if c.false_positive_rate is None or c.false_positive_ci is None:
        return "Nothing to judge yet."
    nominal = f"{100 * NOMINAL_RATE:.0f}%"
    if c.false_positive_ci[0] > NOMINAL_RATE:
        return (
            f"Above the nominal {nominal}: on this machine the 95% intervals are too narrow "
            "(noise that hits one side of a round, not both). Read a significant result near "
            "the noise floor with suspicion, and rerun on a quieter machine."
        )
    if c.cells_tested < ENOUGH_CELLS:
        # A handful of cells cannot tell 5% from 30%: say so rather than pass the machine.
        return (
            f"Too few cells to judge against the nominal {nominal}: fewer than "
            f"{ENOUGH_CELLS} cells leave the interval wide; `encbench calibrate` measures more."
        )
    if c.false_positive_rate <= NOMINAL_RATE:
        return f"Within the nominal {nominal}: the 95% intervals hold on this machine."
    return (
        f"Above {nominal}, but its interval includes {nominal}: not distinguishable from the "
        "nominal rate with this many cells."
    )


def groups_table(c: Calibration) -> Table:
    header = [
        "study",
        "regime / test",
        "cells",
        "false positives",
        "per-round spread of ln(B/A)",
        "CI half-width reached",
    ]
    rows = [
        row(
            g.study,
            g.group,
            str(g.cells),
            str(g.false_positives),
            _pm(g.round_spread_pct),
            _pm(g.halfwidth_pct),
        )
        for g in c.groups
    ]
    return Table(header, rows, caption="Noise floor by study and regime/test", notes=[SPREAD_NOTE])


def cells_table(c: Calibration) -> Table:
    header = [
        "study",
        "cell",
        "rounds",
        "A (plain)",
        "B (plain twin)",
        "B vs A (95% CI)",
        "per-round spread",
        "finding",
    ]
    rows = []
    for cell in c.cells:
        diff = f"{100 * (cell.ratio - 1):+.1f}%"
        if cell.ci_low is not None and cell.ci_high is not None:
            diff += f" ({100 * (cell.ci_low - 1):+.1f} … {100 * (cell.ci_high - 1):+.1f})"
        if cell.false_positive is None:
            finding, style = "fewer than 2 rounds: no interval", "na"
        elif cell.false_positive:
            finding, style = "false positive: the interval excludes no difference", "cost"
        else:
            finding, style = "no difference found", "same"
        rows.append(
            row(
                cell.study,
                cell.label,
                str(cell.rounds),
                f"{cell.a_mean:,.1f}",
                f"{cell.b_mean:,.1f}",
                diff,
                _pm(cell.round_spread_pct),
                finding,
                styles={7: style},
            )
        )
    return Table(
        header,
        rows,
        caption="Every cell: B against A in TPS (at rest), its rate (in transit) or seconds to "
        "the end of the transfer (state transfer: lower is faster)",
    )


def sections(summary: Summary) -> list[Section]:
    """The report of an A/A calibration."""
    c = summary.calibration
    assert c is not None, "only a calibration has these sections"
    bullets = [
        f"False-positive rate: {rate_in_words(c)}. {judgement(c)}",
        "Noise floor over all cells: per-round spread of ln(B/A) median "
        f"{_pm(c.round_spread_pct)}; 95% CI half-width reached median "
        f"{_pm(c.halfwidth_pct)}. An ordinary run's difference of that size is "
        "indistinguishable from this machine's own noise.",
    ]
    out = [Section("A/A calibration", [Paragraph(INTRO), Bullets(bullets), groups_table(c)])]
    if c.cells:
        out.append(Section("Cells", [cells_table(c)]))
    return out


def calibration_for(noise: NoiseFloor | None, study: str) -> Calibration | None:
    """The machine's calibration that measured `study`: the latest, else the newest earlier
    one that did, else the latest (of other studies: still the machine's noise)."""
    if noise is None or noise.latest is None:
        return None
    for found in (noise.latest, *noise.others):
        if study in studies_of(found):
            return found
    return noise.latest


def noise_floor_words(noise: NoiseFloor | None, study: str) -> str:
    """This machine's noise floor in one sentence, as the study's summary quotes it beside a
    result to judge by it (the section "Noise floor of this machine" gives the whole)."""
    found = calibration_for(noise, study)
    if found is None:
        return (
            "No A/A calibration was measured on this machine, so its noise floor is unknown: "
            "`encbench calibrate` measures it (plain against plain, where every difference "
            "found is noise)."
        )
    mine = [g for g in found.groups if g.study == study]
    widths = [g.halfwidth_pct for g in mine if g.halfwidth_pct is not None]
    width = (
        f"{_pm(min(widths))}–{_pm(max(widths)).lstrip('±')}"
        if len(widths) > 1 and min(widths) != max(widths)
        else _pm(widths[0] if widths else found.halfwidth_pct)
    )
    where = f" for {study}" if mine else ""
    return (
        f"This machine's noise floor (A/A calibration of {found.measured_at or 'an unknown date'}, "
        f"plain against plain): false positives {rate_in_words(found)}; the 95% interval's "
        f"half-width{where} {width} (median over cells)."
    )


def noise_floor_section(noise: NoiseFloor | None, sharing: str | None = None) -> Section:
    """An ordinary report's statement of the machine's noise floor, or that none exists;
    `sharing`: how this run's at-rest rounds shared the machine, if it has any."""
    latest = noise.latest if noise else None
    if latest is None:
        return Section("Noise floor of this machine", [Paragraph(NONE_MEASURED)])
    when = latest.measured_at or "an unknown date"
    text = (
        f"The latest A/A calibration of this machine (profile `{latest.profile}`, measured "
        f"{when}; {latest.machine or 'machine not recorded'}"
        + (f"; {latest.servers} servers" if latest.servers else "")
        + "): false-positive rate "
        f"{rate_in_words(latest)}; per-round spread of ln(B/A) median "
        f"{_pm(latest.round_spread_pct)}, 95% CI half-width median {_pm(latest.halfwidth_pct)}. "
        "A difference inside that floor is within this machine's own noise."
    )
    if sharing is not None and sharing != latest.sharing:
        text += (
            f' It was measured with `measure.sharing = "{latest.sharing}"` and this run\'s '
            f"rounds at rest were `{sharing}`, whose floor may differ: calibrate with "
            f'`sharing = "{sharing}"` to know it.'
        )
    blocks: list[Block] = [Paragraph(text), groups_table(latest)]
    for other in noise.others if noise else []:
        studies = ", ".join(sorted(studies_of(other)))
        blocks.append(
            Paragraph(
                f"For {studies}, which the latest did not measure: the calibration of "
                f"{other.measured_at or 'an unknown date'} (profile `{other.profile}`): "
                f"false-positive rate {rate_in_words(other)}; per-round spread median "
                f"{_pm(other.round_spread_pct)}, 95% CI half-width median "
                f"{_pm(other.halfwidth_pct)}."
            )
        )
        blocks.append(groups_table(other))
    return Section("Noise floor of this machine", blocks)
