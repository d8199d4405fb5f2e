"""The at-rest study's part of the report: per workload and regime a table shaped like the
published studies' (Threads | encrypted | no encryption | overhead) with a CI and a verdict,
then cost and regime evidence, the cipher's floor, a summary in words, and its setup lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from encbench import stats
from encbench.engine import stopping_rule
from encbench.report import suspect
from encbench.report.cells import (
    flagged_cost,
    fmt,
    overhead_cell,
    verdict_marks,
    verdict_notes,
    verdict_text,
)
from encbench.report.models import Differences, Estimate, NoiseFloor, Record, Spread
from encbench.report.tables import (
    Block,
    Bullets,
    Cell,
    Columns,
    Paragraph,
    Plot,
    Section,
    Table,
    row,
)
from encbench.servers.mariadb import installs
from encbench.servers.variants import KEY_PROVIDER_PART
from encbench.studies.at_rest import claims, kernel_ciphers
from encbench.studies.at_rest import plots as at_rest_plots
from encbench.studies.at_rest.dialects import MARIADB, dialect_for
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.at_rest.target_regimes import size

Group = tuple[str, str]  # (workload, setting): the regime, and the configuration if it varies
OVERHEAD_NOTE = (
    "Overhead is the cost of encryption: positive means the encrypted server is slower "
    "(TPS) or spends more (latency, CPU), and every interval, in the tables and in the "
    "verdicts, has that sign. TPS columns are means over the rounds; the overhead is the "
    "Hodges–Lehmann estimate of the paired ratios over blocks of two rounds, with its 95% "
    'Wilcoxon interval. "No difference beyond ±m%" is said only when a test of equivalence '
    '(TOST, 90% interval within ±m%) shows it; otherwise "no difference detected".'
)
# Above the tables of cells of scope all against scope tables (server.encryption_against).
AGAINST_TABLES_NOTE = Paragraph(
    'Here both servers encrypt their tables: the "encrypted" side is scope all, the "no '
    'encryption" side scope tables, so every overhead below is what encrypting the logs '
    'adds on top of the tables (the report\'s "What scope all adds to scope tables").'
)
# The figures a gain flags (Estimate.implausible_gain), in the summary's words.
FLAGGED = {
    "tps": "throughput",
    "latency_avg_ms": "average latency",
    "latency_p95_ms": "p95 latency",
    "cpu_ms_per_txn": "server CPU per transaction",
}


def _pair(enc: Spread | None, plain: Spread | None, digits: int = 2) -> str:
    if enc is None or plain is None:
        return "not measured"
    return f"{fmt(enc.mean, digits)} / {fmt(plain.mean, digits)}"


def _threads(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def groups(cells: Sequence[AtRestCell]) -> dict[Group, list[AtRestCell]]:
    found: dict[Group, list[AtRestCell]] = {}
    for cell in cells:
        found.setdefault((cell.workload, cell.setting), []).append(cell)
    return found


# -- tables -----------------------------------------------------------------------------------
def throughput_table(cells: Sequence[AtRestCell], differences: Differences | None = None) -> Table:
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
                verdict_text(comp),
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
    comps = [c.comparisons.get("tps") for c in cells]
    return Table(header, rows, notes=verdict_notes(comps, differences))


def _hit_ratios(enc: Spread | None, plain: Spread | None) -> str:
    if enc is None or plain is None:
        return "–"
    return f"{enc.mean * 100:.2f}% / {plain.mean * 100:.2f}%"


def cost_table(cells: Sequence[AtRestCell]) -> Table | None:
    rows = []
    for c in cells:
        if not c.rounds or c.variants is None:
            continue
        enc, pla, comps = c.variants.encrypted, c.variants.plain, c.comparisons
        cpu = comps.get("cpu_ms_per_txn")
        rows.append(
            row(
                str(c.threads),
                _pair(enc.cpu_ms_per_txn, pla.cpu_ms_per_txn, 3),
                overhead_cell(cpu) if cpu else "not measured",
                verdict_text(cpu) if cpu else "server's CPU not readable from here",
                _hit_ratios(enc.hit_ratio, pla.hit_ratio),
                _pair(enc.pages_read_per_txn, pla.pages_read_per_txn),
                f"{enc.errors} / {pla.errors}",
                f"{c.other_load_pct or 0.0:.1f}%",
                c.status,
                styles={3: cpu.kind if cpu else "na"},
            )
        )
    if not rows:
        return None
    header = [
        "Threads",
        "server CPU ms/txn (enc / plain)",
        "CPU change (95% CI)",
        "CPU verdict",
        "buffer pool hit ratio (enc / plain)",
        "pages read/txn (enc / plain)",
        "errors (enc / plain)",
        "other load",
        "cell ended",
    ]
    cpus = [c.comparisons.get("cpu_ms_per_txn") for c in cells]
    return Table(header, rows, caption="Cost and regime evidence", notes=verdict_notes(cpus, None))


def utilisation_table(cells: Sequence[AtRestCell]) -> Table | None:
    """The published reports' CPU utilisation: the server's CPU as a share of the instance,
    each variant's mean with the 95% CI of that mean, and the paired change in points (the
    relative change and its interval times plain's level), beside the CPU per transaction."""
    rows = []
    for c in cells:
        comp = c.comparisons.get("cpu_util_pct")
        if not c.rounds or c.variants is None or comp is None:
            continue
        enc, pla = c.variants.encrypted.cpu_util_pct, c.variants.plain.cpu_util_pct
        if enc is None or pla is None:
            continue
        rows.append(
            row(
                str(c.threads),
                _level(enc, c.rounds),
                _level(pla, c.rounds),
                _points(comp, pla.mean),
                verdict_text(comp),
                styles={4: comp.kind},
            )
        )
    if not rows:
        return None
    header = [
        "Threads",
        "encrypted CPU % (95% CI)",
        "no encryption CPU % (95% CI)",
        "change, points (95% CI)",
        "verdict (relative change)",
    ]
    return Table(
        header,
        rows,
        caption="Server CPU utilisation, % of the instance's cores",
        notes=verdict_notes([c.comparisons.get("cpu_util_pct") for c in cells], None),
    )


def _level(spread: Spread, rounds: int) -> str:
    """A variant's mean utilisation with the 95% CI of that mean (its rounds' spread)."""
    ci = stats.mean_ci(spread.mean, spread.stdev, rounds)
    if ci is None:
        return f"{spread.mean:.1f}"
    return f"{spread.mean:.1f} ({ci[0]:.1f}–{ci[1]:.1f})"


def _points(comp: Estimate, plain_pct: float) -> str:
    """The paired relative change and its interval, in points of plain's utilisation."""
    pts = comp.overhead_pct * plain_pct / 100.0
    if comp.overhead_ci_pct is None:
        return f"{pts:+.1f}"
    low, high = (x * plain_pct / 100.0 for x in comp.overhead_ci_pct)
    return f"{pts:+.1f} ({low:+.1f} … {high:+.1f})"


def _worst(enc: float | None, plain: float | None) -> str:
    if enc is None or plain is None:
        return "not measured"
    return f"{fmt(enc, 0)} / {fmt(plain, 0)}"


def _stalled(cell: AtRestCell) -> str:
    assert cell.variants is not None
    enc, pla = cell.variants.encrypted, cell.variants.plain
    return f"{enc.stalled_runs or 0} / {pla.stalled_runs or 0} of {cell.rounds}"


def latency_table(cells: Sequence[AtRestCell]) -> Table | None:
    """The published studies' latency columns: average and p95 per thread count, each
    variant's mean over the rounds and the paired change with its interval (⚠ where the
    encrypted side came out better); where the runs kept their histogram and series (the
    steady write design), p99 the same way, the worst maximum of any run and the runs that
    stalled (a maximum of a second or more), each stall explained under the table."""
    rows = []
    done = [c for c in cells if c.rounds and c.variants is not None]
    tails = any("latency_p99_ms" in c.comparisons for c in done)
    for c in done:
        assert c.variants is not None
        enc, pla, comps = c.variants.encrypted, c.variants.plain, c.comparisons
        texts = [
            str(c.threads),
            _pair(enc.latency_avg_ms, pla.latency_avg_ms),
            flagged_cost(comps["latency_avg_ms"]),
            _pair(enc.latency_p95_ms, pla.latency_p95_ms),
            flagged_cost(comps["latency_p95_ms"]),
        ]
        styles: dict[int, str] = {2: comps["latency_avg_ms"].kind, 4: comps["latency_p95_ms"].kind}
        if tails:
            p99 = comps.get("latency_p99_ms")
            texts += [
                _pair(enc.latency_p99_ms, pla.latency_p99_ms),
                flagged_cost(p99) if p99 is not None else "not measured",
                _worst(enc.latency_worst_ms, pla.latency_worst_ms),
                _stalled(c),
            ]
            styles |= {6: p99.kind} if p99 is not None else {}
        rows.append(row(*texts, styles=styles))
    if not rows:
        return None
    header = [
        "Threads",
        "avg latency ms (enc / plain)",
        "avg change (95% CI)",
        "p95 latency ms (enc / plain)",
        "p95 change (95% CI)",
    ]
    metrics = ("latency_avg_ms", "latency_p95_ms", "latency_p99_ms")
    if tails:
        header += [
            "p99 latency ms (enc / plain)",
            "p99 change (95% CI)",
            "worst max ms (enc / plain)",
            "runs stalled ≥1 s (enc / plain)",
        ]
    latencies = [c.comparisons.get(m) for c in done for m in metrics if m in c.comparisons]
    notes = verdict_notes(latencies, None) + stall_notes(done)
    return Table(header, rows, caption="Latency", notes=notes)


# The wait counters a stall is read against, in words (study.WAIT_COUNTERS and the pool's).
WAIT_WORDS = {
    "Innodb_buffer_pool_wait_free": "waits for a free page",
    "Innodb_log_waits": "waits for the redo log buffer",
    "Innodb_row_lock_waits": "row lock waits",
    "Innodb_row_lock_time": "ms of row lock waits",
    "Innodb_deadlocks": "deadlocks",
    "Binlog_group_commit_trigger_timeout": "binary log group commits ended by their timeout",
}


def stall_notes(cells: Sequence[AtRestCell]) -> list[str]:
    """Each cell with a stalled run (a maximum latency of a second or more): how many runs
    on each side and what the server counted those runs waiting for."""
    notes = []
    for c in cells:
        assert c.variants is not None
        sides = []
        for name, side in (("encrypted", c.variants.encrypted), ("plain", c.variants.plain)):
            if not side.stalled_runs:
                continue
            waits = side.stall_waits or {}
            counted = [f"{waits[k]:,} {words}" for k, words in WAIT_WORDS.items() if waits.get(k)]
            said = (
                "; the server counted " + ", ".join(counted)
                if counted
                else (
                    "; the server counted none of its waits (free pages, redo log buffer, row "
                    "locks): a stall outside InnoDB's counted waits"
                )
            )
            worst = fmt(side.latency_worst_ms or 0, 0)
            sides.append(f"{side.stalled_runs} {name} run(s), the worst {worst} ms{said}")
        if sides:
            notes.append(
                f"{c.threads} thr: a transaction took a second or more in "
                + "; ".join(sides)
                + ". Their seconds are in each run's per-second series (at-rest.jsonl: "
                "tps_per_s) and in the HTML report's series plot."
            )
    return notes


def claims_section(part: AtRestSummary) -> Section | None:
    """The published study's two claims (claims.SOURCE), each a contrast of the measured
    cells' costs with its interval (claims.py), in throughput and in server CPU per
    transaction; absent when no two cells could be compared."""
    contrasts: list[claims.Contrast] = []
    notes = [claims.METHOD]
    for metric, words in claims.MEASURES.items():
        found, left_out = claims.claims(part.cells, metric)
        contrasts += found
        if left_out and found:
            notes.append(
                f"{left_out} measured cell(s) had no interval in {words} and take no part."
            )
    if not contrasts:
        return None
    rows = [
        row(
            c.claim,
            claims.MEASURES[c.metric],
            c.compared,
            f"{c.difference:+.1f} ({c.ci[0]:+.1f} … {c.ci[1]:+.1f})",
            f"{c.cells[0]} / {c.cells[1]}",
            c.verdict,
            styles={5: c.kind},
        )
        for c in contrasts
    ]
    header = [
        "claim",
        "in",
        "compared",
        "difference in cost, points (95% CI)",
        "cells",
        "verdict",
    ]
    return Section(
        claims.TITLE,
        [
            Paragraph(claims.INTRO),
            Bullets(claims.in_words(contrasts)),
            Table(header, rows, notes=notes),
        ],
    )


def floor_table(cells: Sequence[AtRestCell]) -> Table | None:
    """The cipher's floor (report/floor.py) beside the measured extra server CPU."""
    rows = []
    for c in cells:
        f = c.floor
        if not c.rounds or f is None:
            continue
        ci = f.extra_cpu_ci_us
        extra = f"{f.extra_cpu_us_per_txn:+,.1f}"
        if ci:
            extra += f" ({ci[0]:+,.1f} … {ci[1]:+,.1f})"
        rows.append(
            row(
                str(c.threads),
                f"{fmt(f.pages_decrypted_per_txn, 3)} / {fmt(f.pages_encrypted_per_txn, 3)}",
                fmt(f.cipher_us_per_txn, 1),
                extra,
                f.explained,
            )
        )
    if not rows:
        return None
    header = [
        "Threads",
        "pages decrypted / encrypted per txn",
        "cipher floor µs/txn",
        "extra server CPU µs/txn (95% CI)",
        "the cipher's share",
    ]
    return Table(
        header,
        rows,
        caption="The cipher's floor: its own CPU per transaction (this machine's "
        "`openssl speed`) beside the measured extra server CPU",
    )


def cost_profile_blocks(cells: Sequence[AtRestCell]) -> list[Block]:
    """Where the extra CPU goes (report/cost_profile.py): one column per profiled cell, one
    row per function group; or the one reason it could not be measured."""
    profiled = [c for c in cells if c.rounds and c.cost_profile is not None]
    if not profiled:
        return []
    reasons = {
        c.cost_profile.unavailable
        for c in profiled
        if c.cost_profile and c.cost_profile.unavailable
    }
    measured = [c for c in profiled if c.cost_profile and not c.cost_profile.unavailable]
    blocks: list[Block] = [
        Paragraph(f"Where the cost goes: not measured — {r}.") for r in sorted(reasons)
    ]
    if not measured:
        return blocks
    from encbench.servers.mariadb.cpu_groups import GROUPS

    header = ["extra CPU µs per txn (per cipher page)", *(_threads(c.threads) for c in measured)]
    rows = []
    for group in (*GROUPS, "total"):
        line = [Cell(group)]
        for c in measured:
            p = c.cost_profile
            assert p is not None
            values = p.extra_us_per_txn
            per_page = p.extra_us_per_page
            us = sum(values.values()) if group == "total" else values.get(group, 0.0)
            text = f"{us:+,.1f}"
            if per_page is not None:
                page = sum(per_page.values()) if group == "total" else per_page.get(group, 0.0)
                text += f" ({page:+,.2f})"
            line.append(Cell(text))
        rows.append(line)
    first = measured[0].cost_profile
    assert first is not None
    notes = [f"{_threads(c.threads)}: {c.cost_profile.words}." for c in measured if c.cost_profile]
    notes.append(
        f"From one extra paired run of {first.seconds} s per cell after its rounds, "
        "`perf record -e cpu-clock` on the running server (samples plain / encrypted: "
        + ", ".join(
            f"{c.cost_profile.samples[0]} / {c.cost_profile.samples[1]}"
            for c in measured
            if c.cost_profile
        )
        + "); one run each, so small groups carry sampling noise. Bare libcrypto addresses "
        "are the cipher core where `openssl speed` ran the same cipher; InnoDB's own "
        "functions are hidden in Debian's mariadbd. Reports: "
        + ", ".join(f"`{r}`" for c in measured if c.cost_profile for r in c.cost_profile.reports)
        + "."
    )
    blocks.append(
        Table(header, rows, caption="Where the extra server CPU goes, by function group "
              "(encrypted − plain)", notes=notes)
    )  # fmt: skip
    return blocks


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
                    line.append(Cell(f"{comp.overhead_pct:+.1f}%{verdict_marks(comp)}", comp.kind))
            rows.append(line)
    return Table(header, rows)


# -- the summary in words -------------------------------------------------------------------
def _metric_in_words(cells: list[AtRestCell], metric: str, noun: str) -> str:
    """One clause per metric: the significant effects with their size, then where there was
    none, then where the noise left it open, then where too few rounds left no verdict — the
    reader's questions, in that order."""
    effects, same, open_, none = [], [], [], []
    for c in cells:
        comp = c.comparisons[metric]
        if comp.kind == "same":
            same.append(c)
        elif comp.kind == "unsure":
            open_.append(c)
        elif comp.kind == "na":
            none.append(c)
        else:
            effects.append(f"{suspect.gain_words(comp)}{verdict_marks(comp)} at "
                           f"{_threads(c.threads)}")  # fmt: skip
    parts = list(effects)
    if same:
        margin = same[0].comparisons[metric].verdict.split("±")[1].split("%")[0]
        parts.append(f"no difference beyond ±{margin}% at {_thread_list(same)} (TOST)")
    if open_:
        noise = [hw for c in open_ if (hw := c.comparisons[metric].halfwidth_pct)]
        span = (
            f"noise ±{noise[0]:.1f}%"
            if len(noise) == 1
            else f"noise ±{min(noise):.1f}–{max(noise):.1f}%"
        )
        parts.append(f"no difference detected at {_thread_list(open_)} ({span})")
    if none:
        counts = sorted({c.rounds for c in none})
        rounds = (
            f"{counts[0]} round{'s' if counts[0] != 1 else ''}" + (" each" if len(none) > 1 else "")
            if len(counts) == 1
            else f"{', '.join(str(c.rounds) for c in none)} rounds"
        )
        parts.append(
            f"no verdict at {_thread_list(none)} ({rounds}; an interval needs "
            f"{stopping_rule.rounds_for_interval()})"
        )
    return f"{noun}: " + "; ".join(parts)


def _thread_list(cells: list[AtRestCell]) -> str:
    counts = [str(c.threads) for c in cells]
    joined = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    return f"{joined} thread{'s' if counts != ['1'] else ''}"


def implausible_items(by_group: dict[Group, list[AtRestCell]]) -> list[str]:
    """Each cell where the encrypted server came out better in a figure encryption only adds
    work to (suspect.implausible_items)."""
    return suspect.implausible_items(
        (
            (f"{workload}, {setting}, {_threads(c.threads)}", c)
            for (workload, setting), cells in by_group.items()
            for c in cells
        ),
        FLAGGED,
    )


def summary_in_words(
    by_group: dict[Group, list[AtRestCell]], noise: NoiseFloor | None = None
) -> list[str]:
    lines = []
    for (workload, regime), cells in by_group.items():
        done = [c for c in cells if c.rounds]
        if not done:
            # A cell's status says why (a target that could not measure it) or "not measured"
            # (a run that has not reached it yet): the group says the same, not a guess.
            why = {c.status.removeprefix("not measured: ") for c in cells if ": " in c.status}
            reason = f": {'; '.join(sorted(why))}" if why else " yet"
            lines.append(f"**{workload}, {regime}**: not measured{reason}.")
            continue
        throughput = _metric_in_words(done, "tps", "throughput")
        cpu = (
            _metric_in_words(done, "cpu_ms_per_txn", "server CPU per transaction")
            if all("cpu_ms_per_txn" in c.comparisons for c in done)
            else "server CPU per transaction: not measured (the server's process is not on "
            "this host)"
        )
        lines.append(f"**{workload}, {regime}**: {throughput}. {cpu[0].upper()}{cpu[1:]}.")
    warning = suspect.faster_warning(
        implausible_items(by_group), suspect.SERVERS, noise, RunRecord.STUDY
    )
    lines += [warning] if warning else []
    loaded = [c for cs in by_group.values() for c in cs if (c.other_load_pct or 0.0) > 5.0]
    if loaded:
        worst = max(c.other_load_pct or 0.0 for c in loaded)
        lines.append(
            f"**Shared machine**: other processes and the hypervisor (steal) took up to "
            f"{worst:.0f}% of the CPU during {len(loaded)} cell(s) (column 'other load'). On a "
            "VM, steal also rises with the run's own disk I/O, alike for both variants; paired "
            "rounds absorb such steady load, and rounds with a burst above the cell's usual "
            "level are measured again (see Interference)."
        )
    return lines


def page_cache_words(part: AtRestSummary) -> list[str]:
    """The filesystem layer's page cache, beside the figures it touches: without inline
    encryption ext4 serves O_DIRECT on an encrypted file through the page cache, so in
    io-bound cells the encrypted side may read from memory what plain reads from the disk.
    Each server then runs in a memory budget (pair.py: _limits) and the report says how much
    of the data its page cache held; a run without the budget says it may understate."""
    fs = (part.servers or {}).get("filesystem") or {}
    if not fs or fs.get("inline_crypt"):
        return []
    touched = [c for c in part.cells if c.layer and c.regime == "io-bound" and c.rounds]
    if not touched:
        return []
    lead = (
        "**Filesystem layer, io-bound**: this kernel has no inline encryption, so ext4 serves "
        "InnoDB's O_DIRECT on the encrypted files as buffered I/O, through the page cache"
    )
    budgets = _memory_budgets(part.servers or {})
    cached = {
        side: [getattr(c.variants, side).page_cache_mb for c in touched if c.variants]
        for side in ("encrypted", "plain")
    }
    if not budgets.mib or not all(m is not None for ms in cached.values() for m in ms):
        return [
            f"{lead}: in the {len(touched)} io-bound cell(s) of layer fs or tde+fs the "
            "encrypted side's reads may come from memory while plain's reach the disk. Their "
            "figures are not what a read from an encrypted disk costs, and may understate it "
            "(Setup: Filesystems)."
        ]
    data_mb = float(((part.servers or {}).get("data") or {}).get("size_mb") or 0.0)

    def held(side: str) -> str:
        means = [m.mean for m in cached[side] if m is not None]
        low, high = min(means), max(means)
        return f"{low:,.0f} MB" if round(low) == round(high) else f"{low:,.0f}–{high:,.0f} MB"

    tables = f" (its tables are {data_mb:,.0f} MB)" if data_mb else ""
    sizes = " or ".join(f"{b:,} MiB" for b in budgets.mib)
    budget = (
        f"every server ran inside a memory budget of {sizes} (its buffer pool + an "
        "allowance, page cache included)"
    )
    if budgets.dropped:
        return [
            f"{lead}. In the {len(touched)} io-bound cell(s) of layer fs or tde+fs {budget}, "
            "and the page cache of its files was dropped before each run (outside the run's "
            "window), so the encrypted side reads from the disk what its pool does not hold, "
            "as plain does, rather than what earlier runs left cached. What one run cached: "
            f"the encrypted side's page cache — tables, logs and system files — held "
            f"{held('encrypted')} as its runs ended{tables}, plain's {held('plain')}."
        ]
    return [
        f"{lead}. In the {len(touched)} io-bound cell(s) of layer fs or tde+fs {budget}: the "
        "memory of a server of that size, so the encrypted side reads from the disk what "
        "neither its pool nor that cache holds. Its page cache — tables, logs and system "
        f"files — held {held('encrypted')} as its runs ended{tables}, plain's "
        f"{held('plain')}: what a server of this size gains back from the double caching is "
        "part of these figures, and with it this comparison measures that, not the cost of "
        "the filesystem's cipher."
    ]


@dataclass(frozen=True)
class _Budgets:
    """The io-bound memory budgets (MiB), and whether every one dropped the page cache of
    the servers' files before each run (pair.py: settle)."""

    mib: list[int]
    dropped: bool


def _memory_budgets(servers: Record) -> _Budgets:
    """The io-bound memory budgets (MiB) of the run's configurations, as at-rest.json keeps
    them (one configuration at the top level, several under `configurations`)."""
    configs = list((servers.get("configurations") or {}).values()) or [servers]
    io_bound = [((c.get("regimes") or {}).get("io-bound") or {}) for c in configs]
    with_budget = [r for r in io_bound if "memory_budget_mib" in r]
    return _Budgets(
        mib=sorted({int(r["memory_budget_mib"]) for r in with_budget}),
        dropped=bool(with_budget) and all(r.get("page_cache_dropped") for r in with_budget),
    )


def kernel_words(part: AtRestSummary) -> list[str]:
    """Where the runs were on images: what kernel threads spent per run on each side, beside
    the figures — under the filesystem layer fscrypt decrypts in its read queue's kernel
    threads, outside the server's cgroup, so that CPU is in no server's CPU per transaction
    and was counted as the run's, not as other load (engine/clocks.py)."""
    cells = [c for c in part.cells if c.layer and c.rounds and c.variants]
    spent = {
        side: [s.mean for c in cells if (s := getattr(c.variants, side).kernel_cpu_s)]
        for side in ("encrypted", "plain")
    }
    if not spent["encrypted"] or not spent["plain"]:
        return []

    def span(values: list[float]) -> str:
        return f"{min(values):.2f}–{max(values):.2f} s"

    return [
        "**Kernel threads**: under the filesystem layer the kernel decrypts what a read "
        "brings in, and the loop device does each server's I/O, in kernel threads outside "
        "the server's cgroup: they spent "
        f"{span(spent['encrypted'])} per run with the encrypted side and "
        f"{span(spent['plain'])} with plain, counted as the run's own work (not as other "
        "load) and in no server's CPU per transaction above."
    ]


# -- before the figures ----------------------------------------------------------------------
def lead(part: AtRestSummary) -> list[str]:
    """A target whose buffer pool held all of the data: said before any figure, from
    summary.json's disk_reads_not_measured, so that an in-memory cost is not read as what
    encryption costs a server that reads from disk."""
    n = part.disk_reads_not_measured
    if n is None:
        return []
    measured = {c.regime for c in part.cells if c.rounds}
    headline = "Measured in memory only: no" if measured == {"in-memory"} else "No"
    ways = [
        f"run {n.sandbox} on this machine: its sandboxed servers each get a buffer pool sized "
        "for the regime"
    ]
    if n.largest_pool_mb is not None:
        ways.append(f"this profile against a server whose buffer pool is at most "
                    f"{size(n.largest_pool_mb)}")  # fmt: skip
    ways.append(f"on this server, `data.table_size` of at least {n.table_size:,} rows")
    return [
        f"**{headline} read came from disk.** The target's buffer pool "
        f"({size(n.buffer_pool_mb)}) holds all of this run's data ({size(n.data_mb)} in both "
        "table sets), so the figures below are what encryption costs while pages stay in "
        "memory, where InnoDB does not decrypt them again. They are not what encryption "
        "costs when reads come from disk, which decrypts every page read (the io-bound "
        f"regime: data at least {n.data_over_pool:g} × the buffer pool, not possible here).",
        f"To measure reads from disk: {'; or '.join(ways)}.",
    ]


# -- sections ---------------------------------------------------------------------------------
def sections(
    part: AtRestSummary, extra: Sequence[Section] = (), noise: NoiseFloor | None = None
) -> list[Section]:
    """The study's sections; `extra` (the CPU per shape) goes after the summary and claims,
    before the per-workload details; `noise`, the machine's noise floor, for the summary to
    judge a suspect result by."""
    by_group = groups(part.cells)
    if not by_group:
        return []
    words = summary_in_words(by_group, noise)
    words += page_cache_words(part)
    words += kernel_words(part)
    if part.differences:
        words += [
            f"**Across cells**: {part.differences.sentence()}",
            f"**Interference**: {part.differences.remeasured()}",
        ]
    out = [
        Section("At a glance", [glance_table(by_group)], html_only=True),
        Section("Summary", [Bullets(words), Paragraph(OVERHEAD_NOTE)]),
    ]
    claimed = claims_section(part)
    out += [claimed] if claimed is not None else []
    out += extra
    out += [group_section(w, r, cells, part.differences) for (w, r), cells in by_group.items()]
    return out


def group_section(
    workload: str, regime: str, cells: list[AtRestCell], differences: Differences | None = None
) -> Section:
    """Two columns in HTML: the table shaped like the published studies' above the cost plot
    (what the verdicts say), the variants' own curves beside them (what they rest on); then
    the evidence tables."""
    title = f"{workload}, {regime}"
    cost_plot = Plot(
        lambda: at_rest_plots.overhead_svg(cells, title),
        "Above 0: encrypted is slower (TPS) or spends more server CPU per transaction; the "
        "same figures as the tables' overhead columns.",
    )
    tps_plot = Plot(
        lambda: at_rest_plots.throughput_svg(cells, title),
        "Mean TPS of each variant; band: 95% CI of that mean over rounds. The verdict compares "
        "the two within each round (paired), so it can be certain where the bands overlap.",
    )
    cpu_plot = Plot(
        lambda: at_rest_plots.cpu_per_txn_svg(cells, title),
        "The server's CPU time per transaction, per variant.",
    )
    latency_plot = Plot(
        lambda: at_rest_plots.latency_svg(cells, title),
        "sysbench's average latency of each variant; band: 95% CI of that mean over rounds.",
    )
    blocks: list[Block] = [AGAINST_TABLES_NOTE] if any(c.against for c in cells) else []
    blocks.append(
        Columns(
            [[throughput_table(cells, differences), cost_plot], [tps_plot, latency_plot, cpu_plot]]
        )
    )
    tables = (
        latency_table(cells),
        utilisation_table(cells),
        cost_table(cells),
        floor_table(cells),
    )
    blocks += [t for t in tables if t is not None]
    if any(c.series for c in cells):
        blocks.append(
            Plot(
                lambda: at_rest_plots.series_svg(cells, title),
                "Each variant's TPS in every second of its counted runs, the rounds one after "
                "another (sysbench's per-second reports): a stall is a drop toward zero.",
            )
        )
    blocks += level_notes(cells)
    blocks += cost_profile_blocks(cells)
    return Section(title, blocks)


def level_notes(cells: Sequence[AtRestCell]) -> list[Block]:
    """The steady design's cells whose write path never leveled off in their warm-up."""
    unlevel = [c for c in cells if c.leveled is False]
    if not unlevel:
        return []
    threads = ", ".join(_threads(c.threads) for c in unlevel)
    return [
        Paragraph(
            f"⚠ Not in a steady state: at {threads} the servers' dirty pages or checkpoint "
            "age had not leveled off by the end of the warm-up (measure.steady_warmup_max_s); "
            "these cells were measured anyway and their cost may drift with the rounds."
        )
    ]


# -- setup lines ------------------------------------------------------------------------------
def setup_servers(servers: Record | None) -> list[str]:
    """What the two servers ran with, and the proof that one encrypts and the other not;
    per encrypted configuration where the profile measured several."""
    servers = servers or {}
    if servers.get("design"):
        return setup_target(servers)
    out = []
    install = servers.get("install")
    family = installs.recorded_family(servers)
    if family != MARIADB:
        out.append(
            f"Per run: {family} counts no pages through the cipher (no "
            "Innodb_num_pages_encrypted/decrypted), so its runs are proven by its tablespaces "
            "and raw files when the servers are made, not run by run."
        )
    if install:
        out.append(
            f"Servers from a private root ({install['name']}, Debian {install['suite']}): "
            f"{servers.get('family') or MARIADB} {install['server']} with that root's OpenSSL "
            f"{install['openssl']}, "
            "which its encryption and TLS use, not this host's."
        )
    data = servers.get("data", {})
    if data:
        out.append(
            f"Data: {data['tables']} tables × {data['table_size']:,} rows "
            f"({data['size_mb']} MB), sysbench `--rand-type` as in the profile."
        )
    if servers.get("cpu_measurement"):
        out.append(f"Server CPU per transaction: {servers['cpu_measurement']}")
    if servers.get("binary_log"):
        out.append(
            "Binary log: on in both variants (`log_bin`, ROW format); encrypted only where "
            "the scope is `all` ("
            + ("`encrypt_binlog`" if family == MARIADB else "`binlog_encryption`")
            + ")."
        )
    if servers.get("filesystem"):
        out += filesystem_lines(servers["filesystem"])
    configurations = servers.get("configurations")
    if configurations:
        for label, config in configurations.items():
            out += [f"{label}: {line}" for line in _configuration_lines(config)]
    else:
        out += _configuration_lines(servers)
    return out


def _configuration_lines(config: Record) -> list[str]:
    """One encrypted configuration: its regimes (per instance shape, where there are any),
    encryption, option difference and proofs."""
    view = dialect_for(config.get("family") or MARIADB).proof_view.split(".")[-1]
    sides = config.get("sides") or {}
    out = _regime_lines(config.get("regimes") or {}, view, sides)
    for name, entry in (config.get("shapes") or {}).items():
        regimes = entry.get("regimes") or {}
        out += [f"Shape {name}: {line}" for line in _regime_lines(regimes, view, sides)]
    out += _encryption_lines(config)
    return out


def _regime_lines(
    regimes: Record, view: str = "INNODB_TABLESPACES_ENCRYPTION", sides: Record | None = None
) -> list[str]:
    """`sides`: how a pair of scope all against scope tables names its roles."""
    sides = sides or {}
    out = []
    for regime, rec in regimes.items():
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
            again = "every restart (the last shown)" if rec.get("starts", 1) > 1 else "the restart"
            line += f" Proven again after {again} ({view}): " + ", ".join(
                f"{sides.get(variant, variant)} {p['tablespaces_encrypted']}/"
                f"{p['tablespaces_checked']} encrypted"
                for variant, p in proofs.items()
            )
            line += "."
        for variant, shown in (rec.get("confinement") or {}).items():
            line += f" Confined, {variant}: {_confinement_words(shown)}"
        out.append(line)
    return out


def _confinement_words(proof: Record) -> str:
    """A shaped server's limits as the kernel held them, and where it ran (servers/shapes)."""
    read = ", ".join(f"`{k}` = {v}" for k, v in (proof.get("read_back") or {}).items())
    capped = f" (the IOPS cap's disk: {proof['iops_device']})" if proof.get("iops_device") else ""
    return (
        f"read back {read}{capped}; its Cpus_allowed_list {proof.get('cpus_allowed_list')}, "
        f"in {', '.join(proof.get('cgroups') or [])}."
    )


def _encryption_lines(config: Record) -> list[str]:
    out = []
    enc = config.get("encryption", {})
    layer = enc.get("layer", "tde")
    if enc and layer == "fs":
        out.append("Encryption: the filesystem's alone (fscrypt); InnoDB encrypts nothing.")
    elif enc:
        also = " — and the filesystem's (fscrypt) below it" if layer == "tde+fs" else ""
        # Runs before key_provider was recorded named MySQL's keyring as key_management.
        provider = enc.get("key_provider") or (
            "keyring-file" if enc.get("key_management") else "key-file"
        )
        keys = KEY_PROVIDER_PART.get(provider, provider)
        against = (
            f", against a control of {enc['against']} (the same algorithm)"
            if enc.get("against")
            else ""
        )
        out.append(
            f"Encryption: {keys}, {enc['algorithm']}, scope `{enc['scope']}`{also}{against}."
        )
        out += key_server_lines(enc.get("key_server"))
    sides = config.get("sides") or {}
    diff = config.get("option_difference") or {}
    if diff:
        adds = sides.get("encrypted", "encrypted")
        out.append(
            f"The only server options that differ ({adds} adds): "
            + ", ".join(f"`{k}={v}`" for k, v in diff.items())
            + "."
        )
    for variant, p in (config.get("proofs") or {}).items():
        out.append(
            f"Proof, {sides.get(variant, variant)}: {p['explanation']} (files scanned: "
            f"{', '.join(p['files_scanned'])})."
        )
    return out + filesystem_proof_lines(config.get("filesystem") or {})


def key_server_lines(proven: Record | None) -> list[str]:
    """Where a key server gave the keys: the proof that it did (servers/mariadb/
    key_server_proof.py)."""
    if not proven:
        return []
    spaces = ", ".join(
        f"{n} tablespace{'s' * (n != 1)} at {k}"
        for k, n in (proven.get("tablespaces") or {}).items()
    )
    reads = ", ".join(f"{n} of {k}" for k, n in (proven.get("key_server_reads") or {}).items())
    return [
        f"Keys: from {proven.get('server', 'a key server')}; the encrypted server's "
        f"{proven.get('plugin', 'plugin')}, {spaces}; the key "
        f"server's audit log shows its reads ({reads}). The server's token: "
        f"{proven.get('token', '?')}."
    ]


def filesystem_proof_lines(fs: Record) -> list[str]:
    """Each side's proof below the filesystem (proof/at_rest.prove_images) and what became
    of the fscrypt key: the same for every kind's servers on images."""
    out = []
    for variant, p in (fs.get("proofs") or {}).items():
        example = p.get("example_without_key")
        shown = f"; listed without the key, e.g. `{example}`" if example else ""
        out.append(f"Proof below the filesystem, {variant}: {p['explanation']}{shown}.")
    if fs.get("key"):
        out.append(f"The fscrypt key at the end: {fs['key']}.")
    return out


def images_made(fs: Record) -> str:
    """How each server's image was made and mounted (its sentence's opening, up to "made"):
    the same for every kind's servers on images."""
    dio = fs.get("loop_direct_io") or {}
    return (
        f"Filesystems: each server on its own {fs.get('image_mib', 0):,} MiB ext4 image on a "
        f"loop device (`{fs.get('mkfs', '')}`, mounted `{fs.get('mount_options', '')}`, the "
        f"loop device's direct I/O {'on' if dio and all(dio.values()) else 'off'}), made"
    )


def filesystem_lines(fs: Record) -> list[str]:
    """How the servers' filesystems were made, the kernel cipher of the fscrypt policy, and
    what that cipher's implementation means for the comparison with TDE."""
    policy = fs.get("policy") or {}
    out = [
        f"{images_made(fs)} alike for every variant and configuration; under the filesystem "
        "layer the encrypted "
        f"side's directory has an fscrypt v{policy.get('version', 2)} policy (contents "
        f"{policy.get('contents', '?')}, filenames {policy.get('filenames', '?')}) with a "
        "random 512-bit key made for this run, added to that filesystem's keyring and "
        "removed at the end.",
        "O_DIRECT on the encrypted files: "
        + (
            "kept (mounted `inlinecrypt`: the block layer's software fallback encrypts)."
            if fs.get("inline_crypt")
            else "served as buffered I/O by this kernel (no inline encryption), so under the "
            "filesystem layer the encrypted side's reads may come from the page cache where "
            "plain's reach the device; io-bound, every server of the run is held to a memory "
            "budget (its buffer pool + an allowance, page cache included) and each run "
            "records the page cache it held (Summary)."
        ),
    ]
    out += kernel_ciphers.cipher_lines(fs)
    out += _aes_ni_words(fs)
    return out


def _aes_ni_words(fs: Record) -> list[str]:
    """Where the kernel's AES and OpenSSL's differ, the answer to "in the database or in the
    filesystem?" depends on it: said plainly."""
    contents = next((c for c in fs.get("ciphers") or [] if c.get("role") == "contents"), None)
    if contents is None or not contents.get("driver"):
        return []
    if contents.get("mode") == "Adiantum":
        return [
            "Adiantum, the filesystem's contents mode here, is made for CPUs without AES "
            "instructions (XChaCha12, and AES for one block per message): AES-NI, which TDE's "
            "OpenSSL uses where the CPU has it, does not decide its cost."
        ]
    if not fs.get("cpu_aes"):
        return ["The CPU has no AES instructions: both layers' AES runs in software."]
    if contents.get("aes_ni"):
        return [
            "Both layers use the CPU's AES instructions: the kernel's driver here, and OpenSSL "
            "in user space for TDE."
        ]
    return [
        "This kernel has no AES-NI driver for the filesystem's cipher although the CPU has AES "
        "instructions, while OpenSSL in user space — which TDE's file_key_management uses — "
        "does use them: here the filesystem layer's AES runs in software and TDE's in "
        "hardware. That difference, as much as where the encryption happens, decides which "
        "costs less on this machine; a kernel with an AES-NI driver (aesni_intel) would "
        "change the answer for the filesystem layer."
    ]


def setup_target(servers: Record) -> list[str]:
    """A user's server (studies/at_rest/table_sets.py): what was measured, how it was
    proven, and — beside it — what this design cannot show."""
    target = servers.get("target", {})
    data = servers.get("data", {})
    # Results written before the family was recorded measured MariaDB.
    dialect = dialect_for(target.get("family") or MARIADB)
    option = (servers.get("option_difference") or {}).get("table option", "")
    plain_option, _, encrypted_option = option.partition(" → ")
    out = [
        f"Design: {servers['design']}, on the {target.get('server', 'target')} "
        f"(version {target.get('version', '?')}, key plugins "
        f"{', '.join(target.get('key_plugins', [])) or 'none'}, buffer pool "
        f"{target.get('buffer_pool_mb', '?')} MB, not restarted, no global variable changed).",
        "Databases encbench created for this run (marked as its own): "
        + ", ".join(f"{v}: `{db}`" for v, db in (servers.get("databases") or {}).items())
        + ".",
    ]
    if data:
        out.append(
            f"Data: {data['tables']} tables × {data['table_size']:,} rows per set (about "
            f"{data['size_mb']} MB each), both loaded with one fixed start of sysbench's random "
            "numbers (the same rows) and rebuilt alike by ALTER TABLE … "
            f"{plain_option or dialect.table_option('plain')} / "
            f"{encrypted_option or dialect.table_option('encrypted')}."
        )
    if servers.get("cpu_measurement"):
        out.append(f"Server CPU: {servers['cpu_measurement']}.")
    for variant, p in (servers.get("proofs") or {}).items():
        out.append(
            f"Proof, {variant}: {p['tablespaces_encrypted']}/{p['tablespaces_checked']} of its "
            f"tables encrypted per {dialect.proof_view}; not proven: "
            + "; ".join(p.get("not_proven") or ["nothing"])
            + "."
        )
    for regime, why in (servers.get("skipped") or {}).items():
        out.append(f"Skipped {regime}: {why}.")
    if servers.get("cannot_show"):
        out.append("What this design cannot show: " + "; ".join(servers["cannot_show"]) + ".")
    return out


def _cpu_source_words(source: str) -> str:
    if source == "not measured" or source.startswith("ssh "):
        return source
    if source == "/proc/PID/stat":
        return "/proc/PID/stat (no usable cgroup here: 10 ms ticks)"
    return f"its own cgroup ({source}, ns/µs)"


def setup_capacity(part: AtRestSummary) -> list[str]:
    floors = [c.floor for c in part.cells if c.floor]
    if not part.crypto or not floors:
        return []
    f = floors[0]
    return [
        f"Cipher floor: {f.cipher} at 16 KiB pages, {f.decrypt_us_per_page:.2f} µs to decrypt "
        f"and {f.encrypt_us_per_page:.2f} µs to encrypt one page on one core (`openssl speed "
        "-evp`, one context reused, this machine, this run): the least CPU the cipher can "
        "add; InnoDB's per-page context set-up and the work around the cipher come on top."
    ]


def sharing_words(part: AtRestSummary) -> str:
    """How the rounds shared the machine (machine/placement.py), and what it means for the
    figures."""
    setting = f'(`measure.sharing = "{part.sharing}"`)'
    servers, clients = " and ".join(part.server_cpus), " and ".join(part.client_cpus)
    if part.sharing == "pinned":
        return (
            f"Rounds: pinned {setting} — one variant after the other; the servers ran on CPU "
            f"{servers or '?'} and sysbench on CPU {clients or '?'}, so server and client never "
            "competed for a core."
        )
    if part.sharing == "duet":
        per_side = len(part.server_cpus[0].split(",")) if part.server_cpus else 0
        return (
            f"Rounds: duet {setting} — both variants at the same time, each server with its "
            f"own sysbench on its own half of the CPUs ({servers or '?'}), the halves swapped "
            "between the two rounds of each block, so that a burst of other load hits both "
            f"sides of a round at once. Each side had {per_side} CPU(s): the TPS are a half's, "
            f"not the machine's, and a thread count above {per_side} measures queueing on it."
        )
    return f"Rounds: sequential {setting} — one variant after the other, nothing pinned." + (
        busy_machine_words(part)
    )


# The share of rounds measured again above which the report suggests a duet.  Measured with
# benchmarks/methods.py (README, "This method against the one issue #9 started from"): on
# the quiet machine none of 160 rounds in either run; under a bursty other load 71 of 169
# (42%), when half the cells ended without an interval and a duet gave every cell one.
BUSY_SHARE = 0.25


def busy_machine_words(part: AtRestSummary) -> str:
    """Sequential rounds on a busy machine: point to the way of sharing it that answers there
    (where it can be used: servers encbench started, not confined to a shape)."""
    rejected = sum(c.rounds_rejected for c in part.cells)
    measured = rejected + sum(c.rounds for c in part.cells)
    if (
        part.server_starts is None
        or any(c.shape for c in part.cells)
        or not measured
        or rejected / measured < BUSY_SHARE
    ):
        return ""
    return (
        f" {rejected} of {measured} rounds were measured again for other load: on a machine "
        'this busy, `measure.sharing = "duet"` (at least 2 CPUs and `taskset`) runs both '
        "variants at once, so a burst hits both sides of a round (encbench's docs/findings.md: "
        "under a bursty load it gave every cell an interval where sequential rounds left half "
        "of them without one)."
    )


def restart_words(part: AtRestSummary) -> str:
    """When the servers started afresh: what the interval covers depends on it."""
    if part.server_starts is None:
        return (
            "Servers: the target's, never restarted by encbench — what its processes have of "
            "their own is the same in every block, and no interval here can show it."
        )
    if part.restart == "block":
        return (
            f'Servers: both restarted before every block (`measure.restart = "block"`; '
            f"{part.server_starts} starts in all), so that what a pair of server processes "
            "has of its own varies between blocks and the intervals cover it."
        )
    return (
        f"Servers: restarted only when the regime, shape or configuration changed "
        f'(`measure.restart = "regime"`; {part.server_starts} starts in all) — a difference '
        "between the two processes themselves lasts through every block of a cell, and the "
        "intervals do not cover it."
    )


def setup_last(part: AtRestSummary) -> list[str]:
    return [
        sharing_words(part),
        restart_words(part),
        f"Write workloads: {part.write_workload_state}",
    ]


def calibration_setup(part: AtRestSummary) -> list[str]:
    """A calibration's Setup lines of the at-rest study, in place of its server lines."""
    servers = part.servers or {}
    sides = servers.get("sides") or {}
    out = []
    data = servers.get("data") or {}
    if data:
        tables = f"{data['tables']} table{'s' if data['tables'] != 1 else ''}"
        out.append(
            f"At rest: {tables} × {data['table_size']:,} rows "
            f"({data['size_mb']} MB) in each of two plain servers."
        )
    for regime, rec in (servers.get("regimes") or {}).items():
        out.append(f"Regime {regime}: innodb_buffer_pool_size = {rec['buffer_pool_mb']} MB.")
    if servers:
        differ = servers.get("option_difference") or {}
        out.append(
            "The two servers' options: identical (their own paths and port aside), checked "
            "before loading and before every regime."
            if not differ
            else f"The two servers' options differ in {', '.join(sorted(differ))}."
        )
    for variant, p in (servers.get("proofs") or {}).items():
        # The proof's own words name encryption; a calibration states what they found.
        raw = (
            "the marker and sysbench's rows readable in the raw files"
            if p.get("files_scanned") and p.get("marker_found_in")
            else "; ".join(p.get("not_proven") or []) or "raw files not checked"
        )
        out.append(
            f"Proof, {sides.get(variant, variant)}: plain — InnoDB lists "
            f"{p['tablespaces_encrypted']} of {p['tablespaces_checked']} tablespaces with a "
            f"key; {raw} (files scanned: {', '.join(p['files_scanned']) or 'none'})."
        )
    return out
