"""The estimate in words and numbers: Markdown for a person (stdout), JSON for a program
(--json FILE), and the validation table of a results directory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from encbench.estimate import kinds
from encbench.estimate.counters import Window
from encbench.estimate.model import CauseEstimate, Estimate, Figure, Total
from encbench.estimate.numbers import significant
from encbench.estimate.rescale import Resolved
from encbench.estimate.units import PER, WHAT, DirectoryUnits
from encbench.estimate.validate import IO_BOUND_READ, LIMIT_PCT, Validation
from encbench.report.models import Model

REPORT_SCHEMA = 1
LEAVES_OUT = (
    "**Latency under saturation.** The estimate is CPU at today's load. A server near the "
    "end of its CPU turns extra CPU into queueing: its latency grows by more than the share "
    "says, and at the limit its throughput falls. Where the total comes near the host's "
    "idle CPU, measure with `encbench run --target` on a copy or off-peak.",
    "**The background encryption of existing data.** Turning encryption on rewrites every "
    "existing tablespace once (innodb_encryption_threads): a one-off cost in CPU and I/O, "
    "which the operations study measures. This is the steady state after it.",
    "**I/O.** An encrypted page is as large as a plain one, so encryption adds no page "
    "reads or writes and none is counted; nor are the temporary tables and files scope "
    "`all` also encrypts.",
    "**Small TLS records.** The cost per MiB through TLS comes from bulk reads, whose TLS "
    "records are full; a server of many small queries pays a record's fixed cost more "
    "often, so its bytes cost somewhat more than counted.",
)


class UnitUsed(Model):
    """A unit cost as this estimate used it."""

    name: str
    what: str
    per: str
    measured_us: float
    measured_ci_us: tuple[float, float]
    us: float  # for this server (rescaled where `rescaled`)
    low_us: float
    high_us: float
    kind: str
    configuration: str
    basis: str
    source: str
    measured_on: str
    rescaled: bool
    how: str


class EstimateReport(Model):
    """`encbench estimate --json FILE`: everything the Markdown says, and the window."""

    schema_version: int = REPORT_SCHEMA
    target: str
    server: str  # its version, as it reports it
    window: Window
    estimate: Estimate
    on_now: dict[str, str]  # cause → what the server already encrypts of it
    units: list[UnitUsed]
    words: list[str]
    leaves_out: list[str]


def cores_text(value: float) -> str:
    return "0" if value <= 0 else ("< 0.000001" if value < 1e-6 else significant(value))


def pct_text(value: float) -> str:
    return "0%" if value <= 0 else ("< 0.01%" if value < 0.01 else f"{significant(value, 2)}%")


def rate_text(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else significant(value)


def figure_text(f: Figure | None, kind: str = "cores") -> str:
    if f is None:
        return "–"
    show = {"cores": cores_text, "pct": pct_text, "rate": rate_text}[kind]
    return f"{show(f.value)} ({show(f.low)}–{show(f.high)})"


def on_now(window: Window) -> dict[str, str]:
    """What the first kind's server already encrypts of each cause, from its settings and
    counters (as the kind reads them)."""
    return kinds.first().on_now(window.variables, window.intervals)


def _label(c: CauseEstimate, e: Estimate) -> str:
    return c.label if c.in_scope else f"*{c.label} (not in scope {e.scope})*"


def _names(keys: Sequence[str], e: Estimate) -> str:
    found = {c.key: c for c in e.causes}
    total = e.total.cores.value if e.total.cores else 0.0
    parts = []
    for key in keys:
        c = found[key]
        share = c.cores.value / total if c.cores and total > 0 else 0.0
        parts.append(f"{c.label} ({share:.0%})")
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)


def in_words(e: Estimate, window: Window, units: Mapping[str, Resolved]) -> list[str]:
    """The answer in sentences: the total and its share, what dominates, what scope `all`
    would add, what could not be estimated."""
    words = []
    scope = f"at rest (scope {e.scope})"
    total = e.total.cores
    if total is None:
        words.append(
            "No cause could be estimated: no unit cost is stored for what this server "
            "does. `encbench estimate --measure-units` measures them."
        )
    else:
        sentence = (
            f"At this load, encryption {scope} and TLS on every connection would cost this "
            f"server about **{cores_text(total.value)} cores** "
            f"({cores_text(total.low)}–{cores_text(total.high)})"
        )
        parts = [t for t in (e.at_rest, e.in_transit) if t.cores is not None]
        if len(parts) == 2:
            sentence += ": " + ", ".join(
                f"{t.label} {cores_text(t.cores.value)}" for t in parts if t.cores
            )
        if e.total.share_pct is not None and e.server_cores is not None:
            share = e.total.share_pct
            sentence += (
                f" — **{pct_text(share.value)}** ({pct_text(share.low)}–{pct_text(share.high)}) "
                f"of the {cores_text(e.server_cores)} cores it used over the window"
            )
            if window.host_cores:
                sentence += f" on a host of {window.host_cores}"
        else:
            sentence += (
                " (its share of the server's CPU needs that CPU, read over ssh: add "
                "ssh=USER@HOST to the DSN)"
            )
        words.append(sentence + ".")
        if e.dominant:
            words.append(f"Most of it is {_names(e.dominant, e)}.")
        elif total.value <= 0:
            words.append("Nothing in scope costs measurable CPU at this load.")
    out_of_scope = [c for c in e.causes if not c.in_scope and c.cores is not None]
    if out_of_scope:
        extra = sum(c.cores.value for c in out_of_scope if c.cores)
        names = " and ".join(c.label for c in out_of_scope)
        words.append(
            f"Under scope `all` the {names} would add about {cores_text(extra)} cores "
            "(the cipher alone: a floor)."
        )
    missing = [c for c in e.causes if c.in_scope and c.missing]
    if missing:
        words.append(
            "Not estimated: " + "; ".join(f"{c.label} — {c.missing}" for c in missing) + "."
        )
    rescaled = [u for u in units.values() if u.rescaled]
    if rescaled:
        words.append(
            "Rescaled for this server (the cipher's part only): "
            + ", ".join(u.unit.name.replace("_", " ") for u in rescaled)
            + "; the rest of each unit is this machine's."
        )
    if window.changed:
        words.append(
            "Changed during the window: "
            + ", ".join(f"{k} {a} → {b}" for k, (a, b) in window.changed.items())
            + "; the estimate mixes both settings."
        )
    return words


def units_used(units: Mapping[str, Resolved]) -> list[UnitUsed]:
    return [
        UnitUsed(
            name=name,
            what=WHAT[name],
            per=PER[name],
            measured_us=r.unit.us,
            measured_ci_us=r.unit.ci_us,
            us=r.us,
            low_us=r.low_us,
            high_us=r.high_us,
            kind=r.unit.kind,
            configuration=r.unit.configuration,
            basis=r.unit.basis,
            source=r.unit.source,
            measured_on=r.unit.measured_on,
            rescaled=r.rescaled,
            how=r.how,
        )
        for name, r in units.items()
    ]


def build(
    target: str, window: Window, e: Estimate, units: Mapping[str, Resolved]
) -> EstimateReport:
    return EstimateReport(
        target=target,
        server=kinds.first().server_words(window.variables),
        window=window,
        estimate=e,
        on_now=on_now(window),
        units=units_used(units),
        words=in_words(e, window, units),
        leaves_out=list(LEAVES_OUT),
    )


def _total_row(t: Total, label: str) -> str:
    return (
        f"| **{label}** | | | | **{figure_text(t.cores)}** | "
        f"**{figure_text(t.share_pct, kind='pct')}** | |"
    )


def _unit_text(c: CauseEstimate) -> str:
    if c.unit_us is None:
        return "–"
    return f"{figure_text(c.unit_us, kind='rate')} µs/{PER[c.unit_name]}"


def render_markdown(r: EstimateReport) -> str:
    e, w = r.estimate, r.window
    lines = [
        "# What encryption would cost this server now",
        "",
        f"{r.target} ({r.server or 'version unknown'}): {w.seconds:.0f} s from "
        f"{w.started_at}, its status counters read every 10 s; its CPU: {w.server_cpu}.",
        "",
        " ".join(r.words),
        "",
        "| cause | counted as | rate (lowest–highest 10 s) | unit cost (interval) "
        "| extra CPU, cores (interval) | of the server's CPU | encrypted now |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in e.causes:
        rate = f"{figure_text(c.rate, kind='rate')} {c.rate_unit}" if c.rate else "–"
        cores = figure_text(c.cores) if c.cores else (c.missing or "–")
        lines.append(
            f"| {_label(c, e)} | `{c.counted_as}` | {rate} | {_unit_text(c)} | {cores} | "
            f"{figure_text(c.share_pct, kind='pct')} | {r.on_now.get(c.key, '')} |"
        )
    lines += [
        _total_row(e.at_rest, f"at rest, scope {e.scope}"),
        _total_row(e.in_transit, "in transit (TLS)"),
        _total_row(e.total, "total"),
        "",
        "Each interval holds the unit cost's interval and the load's lowest and highest 10 s; "
        "a total's, all causes at the same moment.",
        "",
        "## The unit costs",
        "",
        "| unit | measured, µs (interval) | how | from | for this server, µs |",
        "|---|---|---|---|---|",
    ]
    for u in r.units:
        lo, hi = u.measured_ci_us
        lines.append(
            f"| {u.what} ({u.configuration}) | {rate_text(u.measured_us)} "
            f"({rate_text(lo)}–{rate_text(hi)}) | {u.kind}: {u.basis} | {u.source}, "
            f"{u.measured_on} | {rate_text(u.us)} ({rate_text(u.low_us)}–"
            f"{rate_text(u.high_us)}): {u.how} |"
        )
    if not r.units:
        lines.append("| – | none stored | | | |")
    lines += ["", "## What this leaves out", ""]
    lines += [f"- {text}" for text in r.leaves_out]
    return "\n".join(lines) + "\n"


def render_validation(v: Validation) -> str:
    lines = [
        "# The estimate against measured runs",
        "",
        f"{v.directory}: each cell estimated from its plain run's counters with unit costs "
        "from the other cells (leave one cell out), against the extra CPU it measured "
        "(encrypted − plain), both at the plain run's rate.",
        "",
        "| cell | kind | rounds | estimated, cores | measured, cores (95% CI) | error | "
        "units (from other cells) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in v.cells:
        measured = cores_signed(c.measured_cores)
        if c.measured_ci:
            measured += f" ({cores_signed(c.measured_ci[0])} … {cores_signed(c.measured_ci[1])})"
        estimated = "–" if c.estimated_cores is None else cores_signed(c.estimated_cores)
        error = f"{c.error_pct:+.1f}%" if c.error_pct is not None else (c.note or "–")
        lines.append(
            f"| {c.cell} | {c.kind} | {c.rounds} | {estimated} | {measured} | {error} | "
            f"{c.units or '–'} |"
        )
    held = [c for c in v.cells if c.kind == IO_BOUND_READ and c.error_pct is not None]
    if held:
        worst = max(held, key=lambda c: abs(c.error_pct or 0.0))
        lines += [
            "",
            f"io-bound read cells: errors {min(c.error_pct or 0 for c in held):+.1f}% to "
            f"{max(c.error_pct or 0 for c in held):+.1f}% (largest: {worst.cell}); the "
            f"tests hold them within ±{LIMIT_PCT:.0f}%.",
        ]
    return "\n".join(lines) + "\n"


def cores_signed(value: float) -> str:
    return ("+" if value > 0 else "") + significant(value)


def render_units(found: DirectoryUnits, stored_in: str) -> str:
    """What `--units-from DIR` (or `--measure-units`) took, and what it could not."""
    lines = [
        "# Unit costs of encryption on this machine",
        "",
        f"From {found.directory.resolve()}, stored in {stored_in} for `encbench estimate`.",
        "",
        "| unit | µs (interval) | how |",
        "|---|---|---|",
    ]
    for unit in found.units.values():
        low, high = unit.ci_us
        lines.append(
            f"| {WHAT[unit.name]} ({unit.configuration}) | {rate_text(unit.us)} "
            f"({rate_text(low)}–{rate_text(high)}) | {unit.kind}: {unit.basis} |"
        )
    for name, why in found.missing.items():
        lines.append(f"| {WHAT[name]} | – | not in this directory: {why} |")
    return "\n".join(lines) + "\n"
