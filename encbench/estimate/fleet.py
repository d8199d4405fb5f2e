"""`encbench estimate --prometheus URL`: every instance's estimate (the model of `--target`,
at its mean and at its peak), the fleet's total, the instances that would pay most first;
in Markdown for a person and JSON for a program."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import Field

from encbench.estimate import kinds, model, prometheus, report
from encbench.estimate.model import Estimate, Figure
from encbench.estimate.prometheus import Asked, Instance
from encbench.estimate.prometheus_api import Sample
from encbench.estimate.report import UnitUsed, cores_text, figure_text
from encbench.estimate.rescale import Resolved
from encbench.report.models import Model

FLEET_SCHEMA = 1
NOT_RESCALED = (
    "the fleet's hosts are reached only through Prometheus, where openssl speed cannot run: "
    "the units are this machine's"
)
UNITS_HERE = (
    "**The units are this machine's.** Prometheus gives no way to run `openssl speed` on a "
    "server's host, so no unit is rescaled to it: a host of another CPU pays another cost."
)


def leaves_out() -> list[str]:
    """What the fleet's estimate leaves out: --target's, and its exporter's own reads."""
    exporter = kinds.first().EXPORTER
    return [
        *report.LEAVES_OUT,
        f"**The exporter's own reads.** {exporter} logs in and reads SHOW GLOBAL STATUS at "
        "every scrape: its connections and bytes are in the server's counters, so on a quiet "
        "server they are part of the TLS causes (as --target's are not: it takes its own out).",
        UNITS_HERE,
    ]


def not_reached() -> str:
    """Why an exporter's instance has no counters: its series saying so."""
    return f"{kinds.first().UP} 0"


class InstanceEstimate(Model):
    """One instance: its estimate at the window's mean rates (the interval: its quietest
    and busiest step windows × the unit's ends) and at its peak (the 95th percentile of
    its step windows × the unit's ends)."""

    instance: str
    server: str
    host_cores: int | None  # its host's CPUs, where node_exporter reports them
    host_busy_cores: float | None  # its host's CPU in use over the window (all processes)
    mean: Estimate
    peak: Estimate
    on_now: dict[str, str]
    notes: list[str]
    units_from: str = ""  # its class's units (--units-from LABEL=VALUE:FILE); "": this machine's


class FleetTotal(Model):
    instances: int
    mean: Figure | None
    peak: Figure | None  # the sum of each instance's own peak: their peaks need not coincide


class FleetReport(Model):
    """`encbench estimate --prometheus URL --json FILE`."""

    schema_version: int = FLEET_SCHEMA
    prometheus: str
    window_end: str  # UTC, ISO 8601
    since_s: float
    step_s: float
    match: str
    peak_is: str
    scope: model.Scope
    instances: list[InstanceEstimate]  # the most expensive first
    no_counters: list[str]  # instances whose exporter reported no counters of their server
    fleet: FleetTotal
    units: list[UnitUsed]
    words: list[str]
    leaves_out: list[str]
    # The units of each class (LABEL=VALUE) its instances took, where --units-from gave any.
    class_units: dict[str, list[UnitUsed]] = Field(default_factory=dict)


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def instance_estimate(
    i: Instance, asked: Asked, units: Mapping[str, Resolved], scope: model.Scope
) -> InstanceEstimate:
    cpu = (
        "its host's CPU in use (node_exporter)"
        if i.host_busy is not None
        else "not reported (no node_exporter of its host)"
    )
    window = prometheus.window_of(i, asked, _iso(asked.end - asked.since_s), cpu)
    mean = model.estimate_at(
        prometheus.cause_rates(i, "mean"), asked.since_s, units, scope, i.host_busy
    )
    peak = model.estimate_at(prometheus.cause_rates(i, "peak"), asked.step_s, units, scope, None)
    notes = prometheus.gaps(i, asked)
    if prometheus.no_traffic(i):
        notes.append("no traffic in the window: its counters did not move, nothing to pay")
    return InstanceEstimate(
        instance=i.name,
        server=i.version,
        host_cores=i.host_cores,
        host_busy_cores=i.host_busy,
        mean=mean,
        peak=peak,
        on_now=report.on_now(window),
        notes=notes,
    )


def _total(e: Estimate) -> float:
    return e.total.cores.value if e.total.cores else 0.0


@dataclass(frozen=True)
class ClassUnits:
    """An instance's class (LABEL=VALUE) and the units measured on a host of it."""

    name: str
    source: str
    units: Mapping[str, Resolved]


def build(
    url: str,
    asked: Asked,
    match: str,
    answers: Mapping[str, list[Sample]],
    units: Mapping[str, Resolved],
    scope: model.Scope,
    classes: Mapping[str, ClassUnits] | None = None,
    more: Sequence[InstanceEstimate] = (),
) -> FleetReport:
    """`classes`: instance → the units of its class, where it has one; `units` otherwise.
    `more`: instances of other kinds, estimated already (kind_fleet.py's)."""
    every = prometheus.by_instance(answers)
    classes = classes or {}

    def estimated(i: Instance) -> InstanceEstimate:
        own = classes.get(i.name)
        if own is None:
            return instance_estimate(i, asked, units, scope)
        found = instance_estimate(i, asked, own.units, scope)
        return found.model_copy(update={"units_from": f"{own.name} ({own.source})"})

    found = [estimated(i) for i in every if prometheus.rates(i, "mean") is not None] + list(more)
    # Exporters up in the window whose server's counters never came (not_reached throughout).
    silent = [i.name for i in every if prometheus.rates(i, "mean") is None]
    ranked = sorted(found, key=lambda e: (-_total(e.mean), e.instance))
    fleet = FleetTotal(
        instances=len(ranked),
        mean=model.added([e.mean.total.cores for e in ranked]),
        peak=model.added([e.peak.total.cores for e in ranked]),
    )
    return FleetReport(
        prometheus=url,
        window_end=_iso(asked.end),
        since_s=asked.since_s,
        step_s=asked.step_s,
        match=match,
        peak_is=prometheus.PEAK_WORDS,
        scope=scope,
        instances=ranked,
        fleet=fleet,
        units=report.units_used(units),
        class_units={c.name: report.units_used(c.units) for c in classes.values()},
        words=(in_words(ranked, fleet, units, scope, classes) if ranked or not silent else [])
        + _silent_words(silent),
        no_counters=silent,
        leaves_out=leaves_out(),
    )


def in_words(
    ranked: Sequence[InstanceEstimate],
    fleet: FleetTotal,
    units: Mapping[str, Resolved],
    scope: model.Scope,
    classes: Mapping[str, ClassUnits] | None = None,
) -> list[str]:
    if not ranked:
        first = kinds.first()
        return [
            f"Prometheus holds no {first.EXPORTER} series ({first.STATUS}*) in this window "
            "for the selector: check --match, --since, and that the exporters are scraped."
        ]
    words = []
    if fleet.mean is not None:
        sentence = (
            f"Across {fleet.instances} instance(s), encryption at rest (scope {scope}) and TLS "
            f"on every connection would cost about **{cores_text(fleet.mean.value)} cores** "
            f"({cores_text(fleet.mean.low)}–{cores_text(fleet.mean.high)}) at the window's "
            "mean rates"
        )
        if fleet.peak is not None:
            sentence += (
                f", and up to {cores_text(fleet.peak.value)} cores with every instance at its "
                f"own peak ({prometheus.PEAK_WORDS}; peaks need not coincide)"
            )
        words.append(sentence + ".")
        top = ranked[0]
        if _total(top.mean) > 0:
            words.append(
                f"The most: {top.instance}, {cores_text(_total(top.mean))} cores"
                + (f" ({_top_causes(top.mean)})" if top.mean.dominant else "")
                + "."
            )
    else:
        words.append(
            "No cause could be estimated: no unit cost is stored for what these servers do. "
            "`encbench estimate --measure-units` measures them."
        )
    dates = sorted({u.unit.measured_on for u in units.values()})
    mine = "this machine's, measured on " + (", ".join(dates) if dates else "no date")
    if classes:
        used = sorted({f"{c.name} from {c.source}" for c in classes.values()})
        words.append(
            f"The unit costs are those of each instance's class ({'; '.join(used)}), the "
            f"others' {mine}; none rescaled to the fleet's hosts."
        )
    else:
        words.append(f"The unit costs are {mine}, not rescaled to the fleet's hosts.")
    quiet = [e.instance for e in ranked if any(n.startswith("no traffic") for n in e.notes)]
    if quiet:
        words.append(f"No traffic in the window: {', '.join(quiet[:10])}.")
    return words


def _silent_words(silent: Sequence[str]) -> list[str]:
    if not silent:
        return []
    shown = ", ".join(silent[:10]) + (f" and {len(silent) - 10} more" if len(silent) > 10 else "")
    return [
        f"Not estimated, no counters in the window (their exporter could not reach the "
        f"server, {not_reached()}, or the counters are missing): {shown}."
    ]


def _top_causes(e: Estimate) -> str:
    found = {c.key: c for c in e.causes}
    return ", ".join(found[k].label for k in e.dominant)


def _cause_cell(e: Estimate, key: str) -> str:
    c = next(c for c in e.causes if c.key == key)
    if c.cores is None:
        return "–"
    text = cores_text(c.cores.value)
    return text if c.in_scope else f"*{text}*"


def _now_cell(on_now: Mapping[str, str]) -> str:
    return f"tables: {on_now.get('table_reads', '?')}; TLS: {on_now.get('tls_handshakes', '?')}"


def render_markdown(r: FleetReport) -> str:
    match = f", series {r.match}" if r.match else ""
    lines = [
        "# What encryption would cost this fleet",
        "",
        f"From {r.prometheus}: the {_span(r.since_s)} up to {r.window_end}{match}, in "
        f"{_span(r.step_s)} step windows; the peak is {r.peak_is}.",
        "",
        " ".join(r.words),
        "",
        "| # | instance | server | extra CPU at the mean, cores (interval) | at the peak "
        "| of its host's CPU in use | "
        + " | ".join(c.label for c in model.CAUSES)
        + " | encrypted now | notes |",
        "|---|---|---|---|---|---|" + "---|" * len(model.CAUSES) + "---|---|",
    ]
    for n, e in enumerate(r.instances, start=1):
        host = figure_text(e.mean.total.share_pct, kind="pct")
        if e.host_cores:
            host += f" ({e.host_cores} CPUs)"
        causes = " | ".join(_cause_cell(e.mean, c.key) for c in model.CAUSES)
        lines.append(
            f"| {n} | {e.instance} | {e.server or '?'} | {figure_text(e.mean.total.cores)} | "
            f"{figure_text(e.peak.total.cores)} | {host} | {causes} | {_now_cell(e.on_now)} | "
            f"{'; '.join(_notes(e)) or '–'} |"
        )
    f = r.fleet
    lines += [
        f"| | **fleet ({f.instances})** | | **{figure_text(f.mean)}** | "
        f"**{figure_text(f.peak)}** | |" + " |" * len(model.CAUSES) + " | |",
        "",
        "Per cause: extra cores at the mean rate (*in italics*: not in scope "
        f"{r.scope}). An interval holds the unit cost's interval and the quietest and busiest "
        "step windows, each cause at its own (a total's: the sum of its causes' ends, "
        "Prometheus giving no moment at which all were lowest). At the peak: each cause at "
        "its own 95th percentile, added (an instance's causes need not peak together).",
        "",
        "## The unit costs (this machine's)",
        "",
        *_unit_rows(r.units),
    ]
    for name, used in r.class_units.items():
        lines += ["", f"## The unit costs of {name}", "", *_unit_rows(used)]
    lines += ["", "## What this leaves out", ""]
    lines += [f"- {text}" for text in r.leaves_out]
    return "\n".join(lines) + "\n"


def _notes(e: InstanceEstimate) -> list[str]:
    return [*e.notes, f"units of {e.units_from}"] if e.units_from else e.notes


def _unit_rows(used: Sequence[UnitUsed]) -> list[str]:
    rows = ["| unit | µs (interval) | how | from |", "|---|---|---|---|"]
    for u in used:
        rows.append(
            f"| {u.what} ({u.configuration}) | {report.rate_text(u.us)} "
            f"({report.rate_text(u.low_us)}–{report.rate_text(u.high_us)}) | {u.kind}: "
            f"{u.basis} | {u.source}, {u.measured_on} |"
        )
    return rows


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:g} s"
