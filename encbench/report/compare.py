"""Compare two results directories (two machines, two versions, AES_CTR against AES_CBC): does
encryption cost more in B than in A, and is the change real?

Cells are matched per study: at-rest by (workload, regime [, algorithm and scope, instance
shape where those are dimensions], threads), in-transit by (test,
method, key type, cipher, RTT, threads, resumption), operations by (operation, encryption
threads).  Each side's cell holds, beside its
primary Hodges–Lehmann estimate, the geometric mean r of its block ratios encrypted/plain with
a Student-t 95% CI; the two sides are independent, so the change is tested with Welch's
t-test on ln r_B − ln r_A (stats.welch_log_ratios) from those t intervals.  It is shown in
percentage points of overhead (B − A); the test is on the ratio of ratios.

What this cannot see: each side is one session of measurements, so the test holds only the
noise within each session, not the variance between sessions (another boot, another day,
another placement on the host).  The report says so; repeat a side to see that variance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, Literal

from pydantic import Field

from encbench import stats
from encbench.report import html as html_report
from encbench.report import markdown, plots
from encbench.report.at_rest_section import overhead_cell
from encbench.report.documents import read_summary
from encbench.report.in_transit_section import TEST_TITLES, method_name
from encbench.report.models import Estimate, Model, Summary
from encbench.report.tables import (
    Block,
    Cell,
    Document,
    Legend,
    Paragraph,
    Plot,
    Section,
    Table,
    row,
)

COMPARISON_SCHEMA = 2  # 2: groups of every study, each cell with its row label and metrics
CONFIDENCE = 0.95
METRICS = {
    "at-rest": {"tps": "Throughput (TPS)", "cpu_ms_per_txn": "Server CPU per transaction"},
    "in-transit": {"rate": "Rate lost to encryption (connections, transactions or MiB per s)"},
    "operations": {
        "time": "Time added by encryption (seconds of the operation; for encrypting existing "
        "data, ms per transaction of the foreground load)"
    },
}
METHOD = (
    "per cell, each side's standard error of ln(encrypted/plain) is recovered from its 95% CI "
    "(se = (ln hi − ln lo) / (2·t(0.975, n−1))); the difference of the two log ratios is "
    "tested with Welch's t-test (Welch–Satterthwaite degrees of freedom), two-sided, at 95%; "
    "change = overhead in B − overhead in A, in percentage points"
)
INTRO = (
    "Overhead is the cost of encryption (positive: the encrypted server is slower, or spends "
    "more server CPU per transaction). A change is B − A in percentage points. Each side is "
    "one session: the test holds the noise within each session, not the variance between "
    "sessions (another boot or day), which one session per side cannot show; run a side "
    "twice and compare the two to see it."
)
Side = Literal["a", "b"]


class MetricChange(Model):
    a: Estimate | None
    b: Estimate | None
    change_pp: float | None = None
    log_difference: float | None = None
    ratio_of_ratios: float | None = None
    se_a: float | None = None
    se_b: float | None = None
    se: float | None = None
    df: float | None = None
    t: float | None = None
    p: float | None = None
    ratio_of_ratios_ci: tuple[float, float] | None = None
    significant: bool | None = None
    note: str | None = None

    @classmethod
    def of(cls, a: Estimate | None, b: Estimate | None) -> MetricChange:
        if a is None or b is None:
            return cls(a=a, b=b)
        test = stats.welch_log_ratios(a.t_estimate(), b.t_estimate(), CONFIDENCE)
        return cls(
            a=a,
            b=b,
            change_pp=b.overhead_pct - a.overhead_pct,
            log_difference=test.log_difference,
            ratio_of_ratios=test.ratio_of_ratios,
            se_a=test.se_a,
            se_b=test.se_b,
            se=test.se,
            df=test.df,
            t=test.t,
            p=test.p,
            ratio_of_ratios_ci=test.ratio_of_ratios_ci,
            significant=test.significant,
            note=test.note,
        )


class ComparedCell(Model):
    label: str  # the row's first column
    name: str  # the cell in words, for "measured only in"
    threads: int
    rounds: tuple[int | None, int | None]
    only_in: Side | None = None
    metrics: dict[str, MetricChange]


class ComparedGroup(Model):
    study: str
    title: str
    row_header: str
    cells: list[ComparedCell]


class SetupLine(Model):
    what: str
    a: str
    b: str
    differs: bool


class Labels(Model):
    a: str
    b: str


class Comparison(Model):
    kind: Literal["encbench-comparison"] = "encbench-comparison"
    schema_: int = Field(default=COMPARISON_SCHEMA, alias="schema")
    labels: Labels
    method: str = METHOD
    confidence: float = CONFIDENCE
    setup: list[SetupLine]
    groups: list[ComparedGroup]
    only_in_a: list[str]
    only_in_b: list[str]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# -- matching cells -----------------------------------------------------------------------------
class _Found(Model):
    """One measured cell of one side: where it goes, and its estimates."""

    group: tuple[str, str]  # (study, group title)
    row_header: str
    label: str
    name: str
    threads: int
    rounds: int
    comparisons: dict[str, Estimate]


def _cells(summary: Summary) -> dict[tuple[Any, ...], _Found]:
    found: dict[tuple[Any, ...], _Found] = {}
    if summary.studies.at_rest:
        for c in summary.studies.at_rest.cells:
            if c.rounds and c.comparisons:
                found[("at-rest", c.workload, c.setting, c.threads)] = _Found(
                    group=("at-rest", f"{c.workload}, {c.setting}"),
                    row_header="Threads",
                    label=str(c.threads),
                    name=f"{c.workload} {c.setting} {c.threads} thr",
                    threads=c.threads,
                    rounds=c.rounds,
                    comparisons=c.comparisons,
                )
    if summary.studies.in_transit:
        for t in summary.studies.in_transit.cells:
            if t.rounds and t.comparisons:
                rtt = f", RTT {t.rtt_ms:g} ms" if t.rtt_ms else ""
                found[("in-transit", *t.key)] = _Found(
                    group=("in-transit", f"in transit: {TEST_TITLES.get(t.test, t.test)}"),
                    row_header="path",
                    label=f"{method_name(t)}{rtt}, {t.threads} thr",
                    name=t.label,
                    threads=t.threads,
                    rounds=t.rounds,
                    comparisons=t.comparisons,
                )
    if summary.studies.operations:
        for o in summary.studies.operations.cells:
            if o.rounds and o.comparisons:
                found[("operations", o.operation, o.threads)] = _Found(
                    group=("operations", "operations"),
                    row_header="operation",
                    label=o.label,
                    name=o.label,
                    threads=o.threads,
                    rounds=o.rounds,
                    comparisons=o.comparisons,
                )
    return found


def _compare_cell(a: _Found | None, b: _Found | None) -> ComparedCell:
    either = a or b
    assert either is not None
    metrics = METRICS[either.group[0]]
    only: Side | None = None if a and b else ("a" if a else "b")
    return ComparedCell(
        label=either.label,
        name=either.name,
        threads=either.threads,
        rounds=(a.rounds if a else None, b.rounds if b else None),
        only_in=only,
        metrics={
            m: MetricChange.of(
                a.comparisons.get(m) if a else None, b.comparisons.get(m) if b else None
            )
            for m in metrics
        },
    )


def _setup(summary: Summary) -> dict[str, str]:
    """What a reader checks first when two runs differ: what was run, where, on what."""
    at_rest, moving = summary.studies.at_rest, summary.studies.in_transit
    ops = summary.studies.operations
    servers = (at_rest.servers if at_rest else None) or {}
    env = summary.environment or {}
    enc, data, cpu = (
        servers.get("encryption") or (ops.encryption if ops else None) or {},
        servers.get("data") or (ops.data if ops else None) or {},
        env.get("cpu") or {},
    )
    pools = ", ".join(
        f"{r} {rec.get('buffer_pool_mb')} MB" for r, rec in (servers.get("regimes") or {}).items()
    )
    mariadb = (
        servers.get("mariadb_version")
        or (moving.mariadb_version if moving else None)
        or (ops.mariadb_version if ops else None)
    )
    return {
        "profile": summary.profile,
        "studies": ", ".join(summary.studies.model_dump(by_alias=True)) or "?",
        "encryption": f"{enc.get('algorithm', '?')}, scope {enc.get('scope', '?')}",
        "TLS": moving.tls_version if moving else "?",
        "MariaDB": str(mariadb or env.get("mariadb") or "?"),
        "CPU": f"{cpu.get('model', '?')}, {cpu.get('cores', '?')} cores",
        "OpenSSL": str(env.get("openssl") or "?"),
        "kernel": str(env.get("kernel") or "?"),
        "data": f"{data['tables']} tables × {data['table_size']:,} rows" if data else "?",
        "buffer pool": pools or "?",
    }


def compare(
    summary_a: Mapping[str, Any] | Summary,
    summary_b: Mapping[str, Any] | Summary,
    label_a: str,
    label_b: str,
) -> Comparison:
    """Match the cells of two summary.json study by study, and test, per cell, whether the
    cost of encryption changed from A to B."""
    a, b = (
        s if isinstance(s, Summary) else read_summary(s, label)
        for s, label in ((summary_a, label_a), (summary_b, label_b))
    )
    cells_a, cells_b = _cells(a), _cells(b)
    groups: dict[tuple[str, str], ComparedGroup] = {}
    for key in [*cells_a, *(k for k in cells_b if k not in cells_a)]:
        found_a, found_b = cells_a.get(key), cells_b.get(key)
        either = found_a or found_b
        assert either is not None
        group = groups.setdefault(
            either.group,
            ComparedGroup(
                study=either.group[0], title=either.group[1], row_header=either.row_header, cells=[]
            ),
        )
        group.cells.append(_compare_cell(found_a, found_b))
    for group in groups.values():
        if group.study == "at-rest":
            group.cells.sort(key=lambda c: c.threads)
    setup_a, setup_b = _setup(a), _setup(b)
    return Comparison(
        labels=Labels(a=label_a, b=label_b),
        setup=[
            SetupLine(what=k, a=setup_a[k], b=setup_b[k], differs=setup_a[k] != setup_b[k])
            for k in setup_a
        ],
        groups=list(groups.values()),
        only_in_a=[c.name for k, c in cells_a.items() if k not in cells_b],
        only_in_b=[c.name for k, c in cells_b.items() if k not in cells_a],
    )


# -- rendering ----------------------------------------------------------------------------------
def _significance(entry: MetricChange) -> str:
    if entry.significant is None or entry.p is None:
        return entry.note or "cannot tell"
    p = entry.p
    # Near the 5% threshold three decimals could show "no (p = 0.050)".
    digits = 4 if 0.045 <= p < 0.055 else 3
    shown = "p < 0.001" if p < 0.001 else f"p = {p:.{digits}f}"
    return f"{'yes' if entry.significant else 'no'} ({shown})"


def _kind(entry: MetricChange) -> str:
    """The verdict marks of the HTML page, for a change: ▲ costs more in B, ▼ less."""
    if entry.a is None or entry.b is None:
        return "na"
    if entry.significant is None:
        return "unsure"
    if not entry.significant:
        return "same"
    return "cost" if (entry.change_pp or 0.0) > 0 else "gain"


def metric_table(group: ComparedGroup, metric: str, labels: Labels) -> Table:
    header = [
        group.row_header,
        f"overhead {labels.a} (95% CI)",
        f"overhead {labels.b} (95% CI)",
        "change",
        "significant?",
    ]
    rows = []
    for cell in group.cells:
        entry = cell.metrics[metric]
        kind = {4: _kind(entry)}
        if entry.a is not None and entry.b is not None:
            a, b = overhead_cell(entry.a), overhead_cell(entry.b)
            change = f"{entry.change_pp or 0.0:+.1f} pp"
            rows.append(row(cell.label, a, b, change, _significance(entry), styles=kind))
        else:
            side = entry.a or entry.b
            shown = overhead_cell(side) if side else "–"
            pair = (shown, "not measured") if entry.a else ("not measured", shown)
            only = labels.a if entry.a else labels.b
            rows.append(row(cell.label, *pair, "–", f"only in {only}", styles=kind))
    return Table(header, rows, caption=METRICS[group.study][metric])


def _plot(group: ComparedGroup, labels: Labels) -> str | None:
    sides = []
    for side in ("a", "b"):
        cells = [c for c in group.cells if getattr(c.metrics["tps"], side) is not None]
        comps = {m: [getattr(c.metrics[m], side) for c in cells] for m in METRICS["at-rest"]}
        sides.append(([c.threads for c in cells], comps))
    return plots.comparison_svg(sides, (labels.a, labels.b), group.title)


def document(comparison: Comparison) -> Document:
    labels = comparison.labels
    title = f"encbench comparison: {labels.a} (A) vs {labels.b} (B)"
    setup = Table(
        ["", labels.a, labels.b, ""],
        [
            [
                Cell(s.what),
                Cell(s.a, "differs" if s.differs else None),
                Cell(s.b, "differs" if s.differs else None),
                Cell("differs" if s.differs else ""),
            ]
            for s in comparison.setup
        ],
    )
    sections = [Section("Setup", [setup])]
    for group in comparison.groups:
        blocks: list[Block] = [metric_table(group, m, labels) for m in METRICS[group.study]]
        if group.study == "at-rest":
            caption = "Cost of encryption in A and in B; bars: 95% CI."
            blocks.append(Plot(partial(_plot, group, labels), caption))
        sections.append(Section(group.title, blocks))
    only = [
        Paragraph(f"Measured only in {label}: {', '.join(names)}.")
        for label, names in ((labels.a, comparison.only_in_a), (labels.b, comparison.only_in_b))
        if names
    ]
    if only:
        sections[-1] = Section(sections[-1].title, [*sections[-1].blocks, *only])
    legend = Legend(
        (
            ("cost", f"costs more in {labels.b}"),
            ("gain", f"costs less in {labels.b}"),
            ("same", "no significant change"),
            ("unsure", "cannot tell"),
        )
    )
    intro: Iterable[Block] = (Paragraph(INTRO), Paragraph(f"Method: {comparison.method}."), legend)
    return Document(title, sections, tuple(intro))


def render_markdown(comparison: Comparison) -> str:
    return markdown.render(document(comparison))


def render_html(comparison: Comparison) -> str:
    """The comparison as one self-contained HTML page, with a plot of both overheads."""
    return html_report.render(document(comparison))
