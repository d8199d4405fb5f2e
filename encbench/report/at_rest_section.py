"""The at-rest study's part of the report: per workload and regime a table shaped like the
seed study's (Threads | encrypted | no encryption | overhead) with a CI and a verdict, then
cost and regime evidence, the cipher's own work, a summary in words, and its setup lines."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report import plots
from encbench.report.models import AtRestCell, AtRestSummary, Estimate, Record, Spread
from encbench.report.tables import (
    Block,
    Bullets,
    Cell,
    Columns,
    Legend,
    Paragraph,
    Plot,
    Section,
    Table,
    row,
)

Group = tuple[str, str]  # (workload, regime)
OVERHEAD_NOTE = (
    "Overhead is the cost of encryption: positive means the encrypted server is slower "
    "(TPS) or spends more (latency, CPU). Values are means over paired rounds; the 95% "
    "CI comes from the per-round ratios."
)


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def overhead_cell(comp: Estimate) -> str:
    ci = comp.overhead_ci_pct
    if not ci:
        return f"{comp.overhead_pct:+.1f}%"
    return f"{comp.overhead_pct:+.1f}% ({ci[0]:+.1f} … {ci[1]:+.1f})"


def _pair(enc: Spread, plain: Spread, digits: int = 2) -> str:
    return f"{fmt(enc.mean, digits)} / {fmt(plain.mean, digits)}"


def _threads(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def groups(cells: Sequence[AtRestCell]) -> dict[Group, list[AtRestCell]]:
    found: dict[Group, list[AtRestCell]] = {}
    for cell in cells:
        found.setdefault((cell.workload, cell.regime), []).append(cell)
    return found


# -- tables -----------------------------------------------------------------------------------
def throughput_table(cells: Sequence[AtRestCell]) -> Table:
    rows = []
    for c in cells:
        if not c.rounds or c.variants is None:
            rows.append(row(str(c.threads), "–", "–", "–", c.status, "0", styles={4: "na"}))
            continue
        comp = c.comparisons["tps"]
        rows.append(
            row(
                str(c.threads),
                fmt(c.variants.encrypted.tps.mean),
                fmt(c.variants.plain.tps.mean),
                overhead_cell(comp),
                comp.verdict,
                str(c.rounds),
                styles={4: comp.kind},
            )
        )
    header = [
        "Threads",
        "encrypted TPS",
        "no encryption TPS",
        "overhead (95% CI)",
        "verdict",
        "rounds",
    ]
    return Table(header, rows)


def cost_table(cells: Sequence[AtRestCell]) -> Table | None:
    rows = []
    for c in cells:
        if not c.rounds or c.variants is None:
            continue
        enc, pla, comps = c.variants.encrypted, c.variants.plain, c.comparisons
        cpu = comps["cpu_ms_per_txn"]
        rows.append(
            row(
                str(c.threads),
                _pair(enc.latency_p95_ms, pla.latency_p95_ms),
                overhead_cell(comps["latency_p95_ms"]),
                _pair(enc.cpu_ms_per_txn, pla.cpu_ms_per_txn, 3),
                overhead_cell(cpu),
                cpu.verdict,
                f"{enc.hit_ratio.mean * 100:.2f}% / {pla.hit_ratio.mean * 100:.2f}%",
                _pair(enc.pages_read_per_txn, pla.pages_read_per_txn),
                f"{enc.errors} / {pla.errors}",
                f"{c.other_load_pct or 0.0:.1f}%",
                c.status,
                styles={5: cpu.kind},
            )
        )
    if not rows:
        return None
    header = [
        "Threads",
        "p95 latency ms (enc / plain)",
        "p95 change (95% CI)",
        "server CPU ms/txn (enc / plain)",
        "CPU change (95% CI)",
        "CPU verdict",
        "buffer pool hit ratio (enc / plain)",
        "pages read/txn (enc / plain)",
        "errors (enc / plain)",
        "other load",
        "cell ended",
    ]
    return Table(header, rows, caption="Cost and regime evidence")


def prediction_table(cells: Sequence[AtRestCell]) -> Table | None:
    rows = []
    for c in cells:
        p = c.prediction
        if not c.rounds or p is None:
            continue
        rows.append(
            row(
                str(c.threads),
                fmt(p.pages_per_txn),
                fmt(p.cipher_ms_per_txn, 4),
                f"{p.predicted_pct:.1f}%",
                overhead_cell(c.comparisons["tps"]),
                p.agreement,
            )
        )
    if not rows:
        return None
    header = [
        "Threads",
        "pages read + written/txn (enc)",
        "cipher work ms/txn",
        "predicted ceiling",
        "measured TPS overhead (95% CI)",
        "measurement vs prediction",
    ]
    return Table(header, rows, caption="The cipher's own work, from this machine's `openssl speed`")


def glance_table(by_group: dict[Group, list[AtRestCell]]) -> Table:
    """Every cell's overhead on one screen, marked, before the details."""
    threads = sorted({c.threads for cells in by_group.values() for c in cells})
    header = ["workload", "regime", "cost of encryption (%) in", *(f"{t} thr" for t in threads)]
    rows = []
    for (workload, regime), cells in by_group.items():
        by_threads = {c.threads: c for c in cells}
        for metric, what in (("tps", "throughput"), ("cpu_ms_per_txn", "server CPU per txn")):
            line = [Cell(workload), Cell(regime), Cell(what)]
            for t in threads:
                cell = by_threads.get(t)
                comp = cell.comparisons.get(metric) if cell and cell.rounds else None
                if comp is None:
                    line.append(Cell("not measured", "na"))
                else:
                    line.append(Cell(f"{comp.overhead_pct:+.1f}%", comp.kind))
            rows.append(line)
    return Table(header, rows)


# -- the summary in words -------------------------------------------------------------------
def _metric_in_words(cells: list[AtRestCell], metric: str, noun: str) -> str:
    """One clause per metric: the significant effects with their size, then where there was
    none, then where the noise left it open — the reader's three questions, in that order."""
    effects, none, open_ = [], [], []
    for c in cells:
        verdict = c.comparisons[metric].verdict
        if verdict.startswith("no measurable"):
            none.append(c)
        elif verdict.startswith("inconclusive"):
            open_.append(c)
        else:
            effects.append(f"{verdict.split(' (')[0]} at {_threads(c.threads)}")
    parts = list(effects)
    if none:
        widest = max(c.comparisons[metric].halfwidth_pct or 0.0 for c in none)
        parts.append(f"no measurable difference at {_thread_list(none)} (±{widest:.1f}% or less)")
    if open_:
        # A cell of one round has no interval (None): it has no noise figure to offer.
        noise = [hw for c in open_ if (hw := c.comparisons[metric].halfwidth_pct)]
        if not noise:
            span = "fewer than 2 rounds"
        elif len(noise) == 1:
            span = f"noise ±{noise[0]:.1f}%"
        else:
            span = f"noise ±{min(noise):.1f}–{max(noise):.1f}%"
        parts.append(f"inconclusive at {_thread_list(open_)} ({span})")
    return f"{noun}: " + "; ".join(parts)


def _thread_list(cells: list[AtRestCell]) -> str:
    counts = [str(c.threads) for c in cells]
    joined = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    return f"{joined} thread{'s' if counts != ['1'] else ''}"


def summary_in_words(by_group: dict[Group, list[AtRestCell]]) -> list[str]:
    lines = []
    for (workload, regime), cells in by_group.items():
        done = [c for c in cells if c.rounds]
        if not done:
            lines.append(f"**{workload}, {regime}**: not measured yet.")
            continue
        throughput = _metric_in_words(done, "tps", "throughput")
        cpu = _metric_in_words(done, "cpu_ms_per_txn", "server CPU per transaction")
        lines.append(f"**{workload}, {regime}**: {throughput}. {cpu[0].upper()}{cpu[1:]}.")
    loaded = [c for cs in by_group.values() for c in cs if (c.other_load_pct or 0.0) > 5.0]
    if loaded:
        worst = max(c.other_load_pct or 0.0 for c in loaded)
        lines.append(
            f"**Shared machine**: other processes used up to {worst:.0f}% of the CPU during "
            f"{len(loaded)} cell(s) (column 'other load'). Paired rounds absorb steady load, "
            "not bursts that hit one side: read those cells' intervals with care, or rerun "
            "them on a quiet machine."
        )
    return lines


# -- sections ---------------------------------------------------------------------------------
def sections(part: AtRestSummary) -> list[Section]:
    by_group = groups(part.cells)
    if not by_group:
        return []
    out = [
        Section("At a glance", [Legend(), glance_table(by_group)], html_only=True),
        Section("Summary", [Bullets(summary_in_words(by_group)), Paragraph(OVERHEAD_NOTE)]),
    ]
    out += [group_section(w, r, cells) for (w, r), cells in by_group.items()]
    return out


def group_section(workload: str, regime: str, cells: list[AtRestCell]) -> Section:
    """Two columns in HTML: the seed-shaped table above the cost plot (what the verdicts say),
    the variants' own curves beside them (what they rest on); then the evidence tables."""
    title = f"{workload}, {regime}"
    cost_plot = Plot(
        lambda: plots.overhead_svg(cells, title),
        "Above 0: encrypted is slower (TPS) or spends more server CPU per transaction; the "
        "same figures as the tables' overhead columns.",
    )
    tps_plot = Plot(
        lambda: plots.throughput_svg(cells, title),
        "Mean TPS of each variant; band: 95% CI of that mean over rounds. The verdict compares "
        "the two within each round (paired), so it can be certain where the bands overlap.",
    )
    cpu_plot = Plot(
        lambda: plots.cpu_per_txn_svg(cells, title),
        "Server (mariadbd) CPU time per transaction, from /proc, per variant.",
    )
    blocks: list[Block] = [
        Columns([[throughput_table(cells), cost_plot], [tps_plot, cpu_plot]]),
    ]
    blocks += [t for t in (cost_table(cells), prediction_table(cells)) if t is not None]
    return Section(title, blocks)


# -- setup lines ------------------------------------------------------------------------------
def setup_servers(servers: Record | None) -> list[str]:
    """What the two servers ran with, and the proof that one encrypts and the other not."""
    servers = servers or {}
    out = []
    data = servers.get("data", {})
    enc = servers.get("encryption", {})
    if data:
        out.append(
            f"Data: {data['tables']} tables × {data['table_size']:,} rows "
            f"({data['size_mb']} MB), sysbench `--rand-type` as in the profile."
        )
    for regime, rec in (servers.get("regimes") or {}).items():
        line = (
            f"Regime {regime}: innodb_buffer_pool_size = {rec['buffer_pool_mb']} MB, "
            "innodb_flush_method = O_DIRECT."
        )
        sources = rec.get("cpu_source") or {}
        if sources:
            line += " Server CPU read from " + ", ".join(
                f"{variant}: {_cpu_source_words(source)}" for variant, source in sources.items()
            )
            line += "."
        proofs = rec.get("proofs") or {}
        if proofs:
            line += " Proven again after the restart (INNODB_TABLESPACES_ENCRYPTION): " + ", ".join(
                f"{variant} {p['tablespaces_encrypted']}/{p['tablespaces_checked']} encrypted"
                for variant, p in proofs.items()
            )
            line += "."
        out.append(line)
    if servers.get("cpu_measurement"):
        out.append(f"Server CPU per transaction: {servers['cpu_measurement']}")
    if enc:
        out.append(f"Encryption: file_key_management, {enc['algorithm']}, scope `{enc['scope']}`.")
    diff = servers.get("option_difference") or {}
    if diff:
        out.append(
            "The only server options that differ (encrypted adds): "
            + ", ".join(f"`{k}={v}`" for k, v in diff.items())
            + "."
        )
    for variant, p in (servers.get("proofs") or {}).items():
        out.append(
            f"Proof, {variant}: {p['explanation']} (files scanned: "
            f"{', '.join(p['files_scanned'])})."
        )
    return out


def _cpu_source_words(source: str) -> str:
    if source == "/proc/PID/stat":
        return "/proc/PID/stat (no usable cgroup here: 10 ms ticks)"
    return f"its own cgroup ({source}, ns/µs)"


def setup_capacity(part: AtRestSummary) -> list[str]:
    predictions = [c.prediction for c in part.cells if c.prediction]
    if not part.crypto or not predictions:
        return []
    p = predictions[0]
    return [
        f"Cipher capacity: {p.cipher} at 16 KiB pages, {p.cipher_mb_per_s:,.0f} MB/s "
        "on one core (`openssl speed -evp`, this machine, this run); the predicted ceiling "
        "is that work as a share of the plain server's mean transaction latency."
    ]


def setup_last(part: AtRestSummary) -> list[str]:
    h = part.harness
    return [
        f"Write workloads: {part.write_workload_state}",
        f"encbench's own CPU during measured windows: {h.cpu_s:.2f} s over "
        f"{h.measured_wall_s:.0f} s measured = {h.share_of_machine_pct:.2f}% of the machine.",
    ]
