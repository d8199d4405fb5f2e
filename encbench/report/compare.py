"""Compare two results directories (two machines, two versions, AES_CTR against AES_CBC): does
encryption cost more in B than in A, and is the change real?

Cells are matched per study, by the key its report part gives (report/parts.py: Compared;
at rest (workload, regime [, configuration, shape], threads), in transit (test, method, key
type, cipher, RTT, threads, resumption), and so on).  Each side's cell holds, beside its
primary Hodges–Lehmann estimate, the geometric mean r of its block ratios encrypted/plain with
a Student-t 95% CI; the two sides are independent, so the change is tested with Welch's
t-test on ln r_B − ln r_A (stats.welch_log_ratios) from those t intervals.  It is shown in
percentage points of overhead (B − A); the test is on the ratio of ratios.

What this cannot see: each side is one session of measurements, so the test holds only the
noise within each session, not the variance between sessions (another boot, another day,
another placement on the host).  The report says so; repeat a side to see that variance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

from pydantic import Field

from encbench import stats
from encbench.report import html as html_report
from encbench.report import markdown, plots
from encbench.report.cells import flagged_cost
from encbench.report.documents import read_summary
from encbench.report.models import Estimate, Model, Summary
from encbench.report.parts import Compared, Reported
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
from encbench.servers import server_kind
from encbench.servers.kind import ServerKind

# 2: groups of every study, each cell with its row label and metrics; 3: each group names its
# metrics with their captions; every study's cells (state transfer, replication, rejoin too).
COMPARISON_SCHEMA = 3
CONFIDENCE = 0.95
METHOD = (
    "per cell, each side's standard error of ln(encrypted/plain) is recovered from its 95% CI "
    "(se = (ln hi − ln lo) / (2·t(0.975, n−1))); the difference of the two log ratios is "
    "tested with Welch's t-test (Welch–Satterthwaite degrees of freedom), two-sided, at 95%; "
    "change = overhead in B − overhead in A, in percentage points"
)
INTRO = (
    "Overhead is the cost of encryption, with the sign of the reports' cost columns and "
    "verdicts: positive when the encrypted side is worse (slower, longer, or more CPU per "
    "transaction); ⚠ marks an encrypted side that came out better where encryption only adds "
    "work (its report says why that is not encryption's doing). A change is B − A in "
    "percentage points: positive when encryption costs more in B. Each side is "
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
    # The metrics compared, each with the caption of its table (the study's compare_metrics).
    metrics: dict[str, str]
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
Found = tuple[Reported, Compared]


def _cells(summary: Summary, studies: Sequence[Reported]) -> dict[tuple[Any, ...], Found]:
    """Every measured cell of every study in the summary, by its key (the study's own)."""
    found: dict[tuple[Any, ...], Found] = {}
    for study in studies:
        part = summary.part(study.name)
        if part is not None:
            for cell in study.report.compared(part):
                found[cell.key] = (study, cell)
    return found


def _compare_cell(a: Found | None, b: Found | None) -> ComparedCell:
    either = a or b
    assert either is not None
    study, cell = either
    only: Side | None = None if a and b else ("a" if a else "b")
    ca, cb = (a[1] if a else None), (b[1] if b else None)
    return ComparedCell(
        label=cell.label,
        name=cell.name,
        threads=cell.threads,
        rounds=(ca.rounds if ca else None, cb.rounds if cb else None),
        only_in=only,
        metrics={
            m: MetricChange.of(
                ca.comparisons.get(m) if ca else None, cb.comparisons.get(m) if cb else None
            )
            for m in study.report.compare_metrics
        },
    )


def _kinds(summaries: Sequence[Summary], studies: Sequence[Reported]) -> list[ServerKind]:
    """The server kinds either run measured (a run of no study: MariaDB's, the default)."""
    measured = {
        kind
        for s in studies
        for x in summaries
        if (part := x.part(s.name)) is not None
        for kind in s.report.setup(part).kinds_measured(s.kinds)
    }
    return [k for k in server_kind.kinds() if k.name in measured] or server_kind.kinds()[:1]


def _setup(
    summary: Summary, studies: Sequence[Reported], kinds: Sequence[ServerKind]
) -> dict[str, str]:
    """What a reader checks first when two runs differ: what was run, where, on what; each
    study's facts from its part, the first study that knows one giving it; each server
    kind's version (either run's kinds, so that both columns have the same lines)."""
    env = summary.environment or {}
    facts: dict[str, str] = {}
    for study in studies:
        part = summary.part(study.name)
        if part is not None:
            for key, value in study.report.compare_setup(part).items():
                facts.setdefault(key, value)
    cpu = env.get("cpu") or {}
    return {
        "profile": summary.profile,
        "studies": ", ".join(summary.studies) or "?",
        "encryption": facts.get("encryption", "?"),
        "TLS": facts.get("TLS", "?"),
        **{k.title: facts.get(k.title) or str(env.get(k.name) or "?") for k in kinds},
        "Galera": facts.get("Galera", "?"),
        "CPU": f"{cpu.get('model', '?')}, {cpu.get('cores', '?')} cores",
        # A private root's server uses the root's OpenSSL, not this host's.
        "OpenSSL": facts.get("OpenSSL") or str(env.get("openssl") or "?"),
        "kernel": str(env.get("kernel") or "?"),
        "data": facts.get("data", "?"),
        "buffer pool": facts.get("buffer pool", "?"),
    }


def compare(
    summary_a: Mapping[str, Any] | Summary,
    summary_b: Mapping[str, Any] | Summary,
    label_a: str,
    label_b: str,
    studies: Sequence[Reported],
) -> Comparison:
    """Match the cells of two summary.json study by study, and test, per cell, whether the
    cost of encryption changed from A to B."""
    a, b = (
        s if isinstance(s, Summary) else read_summary(s, label, studies)
        for s, label in ((summary_a, label_a), (summary_b, label_b))
    )
    cells_a, cells_b = _cells(a, studies), _cells(b, studies)
    groups: dict[tuple[str, str], ComparedGroup] = {}
    for key in [*cells_a, *(k for k in cells_b if k not in cells_a)]:
        found_a, found_b = cells_a.get(key), cells_b.get(key)
        either = found_a or found_b
        assert either is not None
        study, cell = either
        group = groups.setdefault(
            (study.name, cell.group),
            ComparedGroup(
                study=study.name,
                title=cell.group,
                row_header=cell.row_header,
                metrics=dict(study.report.compare_metrics),
                cells=[],
            ),
        )
        group.cells.append(_compare_cell(found_a, found_b))
    for group in groups.values():
        if group.row_header == "Threads":
            group.cells.sort(key=lambda c: c.threads)
    kinds = _kinds((a, b), studies)
    setup_a, setup_b = _setup(a, studies, kinds), _setup(b, studies, kinds)
    return Comparison(
        labels=Labels(a=label_a, b=label_b),
        setup=[
            SetupLine(what=k, a=setup_a[k], b=setup_b[k], differs=setup_a[k] != setup_b[k])
            for k in setup_a
        ],
        groups=list(groups.values()),
        only_in_a=[c.name for k, (_, c) in cells_a.items() if k not in cells_b],
        only_in_b=[c.name for k, (_, c) in cells_b.items() if k not in cells_a],
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
            a, b = flagged_cost(entry.a), flagged_cost(entry.b)
            change = f"{entry.change_pp or 0.0:+.1f} pp"
            rows.append(row(cell.label, a, b, change, _significance(entry), styles=kind))
        else:
            side = entry.a or entry.b
            shown = flagged_cost(side) if side else "–"
            pair = (shown, "not measured") if entry.a else ("not measured", shown)
            only = labels.a if entry.a else labels.b
            rows.append(row(cell.label, *pair, "–", f"only in {only}", styles=kind))
    return Table(header, rows, caption=group.metrics[metric])


def _plot(group: ComparedGroup, labels: Labels) -> str | None:
    """Along the thread sweep where the group's rows are thread counts; otherwise each row's
    overhead in A and in B side by side."""
    if group.row_header != "Threads":
        return plots.side_by_side_svg(
            [c.label for c in group.cells],
            {m: [(c.metrics[m].a, c.metrics[m].b) for c in group.cells] for m in group.metrics},
            group.metrics,
            (labels.a, labels.b),
            group.title,
        )
    first = next(iter(group.metrics))
    sides = []
    for side in ("a", "b"):
        cells = [c for c in group.cells if getattr(c.metrics[first], side) is not None]
        comps = {m: [getattr(c.metrics[m], side) for c in cells] for m in group.metrics}
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
        blocks: list[Block] = [metric_table(group, m, labels) for m in group.metrics]
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
