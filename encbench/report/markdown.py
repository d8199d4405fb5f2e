"""report.md: per workload and regime a table shaped like the seed study's
(Threads | encrypted | no encryption | overhead) with a CI and a verdict, then cost and
regime evidence, a summary in words and the setup."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _threads(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def _pair(enc: dict[str, Any], plain: dict[str, Any], metric: str, digits: int = 2) -> str:
    return f"{_fmt(enc[metric]['mean'], digits)} / {_fmt(plain[metric]['mean'], digits)}"


def overhead_cell(comp: dict[str, Any]) -> str:
    ci = comp.get("overhead_ci_pct")
    if not ci:
        return f"{comp['overhead_pct']:+.1f}%"
    return f"{comp['overhead_pct']:+.1f}% ({ci[0]:+.1f} … {ci[1]:+.1f})"


def groups(cells: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cell in cells:
        groups.setdefault((cell["workload"], cell["regime"]), []).append(cell)
    return groups


def throughput_table(cells: list[dict[str, Any]]) -> str:
    rows = []
    for c in cells:
        if not c["rounds"]:
            rows.append([str(c["threads"]), "–", "–", "–", c["status"], "0"])
            continue
        v, comp = c["variants"], c["comparisons"]["tps"]
        rows.append(
            [
                str(c["threads"]),
                _fmt(v["encrypted"]["tps"]["mean"]),
                _fmt(v["plain"]["tps"]["mean"]),
                overhead_cell(comp),
                comp["verdict"],
                str(c["rounds"]),
            ]
        )
    return table(
        ["Threads", "encrypted TPS", "no encryption TPS", "overhead (95% CI)", "verdict", "rounds"],
        rows,
    )


def cost_table(cells: list[dict[str, Any]]) -> str:
    rows = []
    for c in cells:
        if not c["rounds"]:
            continue
        v, comps = c["variants"], c["comparisons"]
        enc, pla = v["encrypted"], v["plain"]
        rows.append(
            [
                str(c["threads"]),
                _pair(enc, pla, "latency_p95_ms"),
                overhead_cell(comps["latency_p95_ms"]),
                _pair(enc, pla, "cpu_ms_per_txn", 3),
                overhead_cell(comps["cpu_ms_per_txn"]),
                comps["cpu_ms_per_txn"]["verdict"],
                f"{enc['hit_ratio']['mean'] * 100:.2f}% / {pla['hit_ratio']['mean'] * 100:.2f}%",
                _pair(enc, pla, "pages_read_per_txn"),
                f"{enc['errors']} / {pla['errors']}",
                f"{c.get('other_load_pct', 0.0):.1f}%",
                c["status"],
            ]
        )
    return table(
        [
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
        ],
        rows,
    )


def prediction_table(cells: list[dict[str, Any]]) -> str:
    rows = []
    for c in cells:
        p = c.get("prediction")
        if not c["rounds"] or not p:
            continue
        rows.append(
            [
                str(c["threads"]),
                _fmt(p["pages_per_txn"]),
                _fmt(p["cipher_ms_per_txn"], 4),
                f"{p['predicted_pct']:.1f}%",
                overhead_cell(c["comparisons"]["tps"]),
                p["agreement"],
            ]
        )
    return table(
        [
            "Threads",
            "pages read + written/txn (enc)",
            "cipher work ms/txn",
            "predicted ceiling",
            "measured TPS overhead (95% CI)",
            "measurement vs prediction",
        ],
        rows,
    )


def _metric_in_words(cells: list[dict[str, Any]], metric: str, noun: str) -> str:
    """One clause per metric: the significant effects with their size, then where there was
    none, then where the noise left it open — the reader's three questions, in that order."""
    effects, none, open_ = [], [], []
    for c in cells:
        comp = c["comparisons"][metric]
        verdict: str = comp["verdict"]
        if verdict.startswith("no measurable"):
            none.append(c)
        elif verdict.startswith("inconclusive"):
            open_.append(c)
        else:
            effects.append(f"{verdict.split(' (')[0]} at {_threads(c['threads'])}")
    parts = list(effects)
    if none:
        widest = max(c["comparisons"][metric]["halfwidth_pct"] for c in none)
        parts.append(f"no measurable difference at {_thread_list(none)} (±{widest:.1f}% or less)")
    if open_:
        # A cell of one round has no interval (None): it has no noise figure to offer.
        noise = [hw for c in open_ if (hw := c["comparisons"][metric]["halfwidth_pct"])]
        if not noise:
            span = "fewer than 2 rounds"
        elif len(noise) == 1:
            span = f"noise ±{noise[0]:.1f}%"
        else:
            span = f"noise ±{min(noise):.1f}–{max(noise):.1f}%"
        parts.append(f"inconclusive at {_thread_list(open_)} ({span})")
    return f"{noun}: " + "; ".join(parts)


def _thread_list(cells: list[dict[str, Any]]) -> str:
    counts = [str(c["threads"]) for c in cells]
    joined = counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]
    return f"{joined} thread{'s' if counts != ['1'] else ''}"


def summary_in_words(groups: dict[tuple[str, str], list[dict[str, Any]]]) -> list[str]:
    lines = []
    for (workload, regime), cells in groups.items():
        done = [c for c in cells if c["rounds"]]
        if not done:
            lines.append(f"- **{workload}, {regime}**: not measured yet.")
            continue
        throughput = _metric_in_words(done, "tps", "throughput")
        cpu = _metric_in_words(done, "cpu_ms_per_txn", "server CPU per transaction")
        lines.append(f"- **{workload}, {regime}**: {throughput}. {cpu[0].upper()}{cpu[1:]}.")
    loaded = [c for cs in groups.values() for c in cs if c.get("other_load_pct", 0.0) > 5.0]
    if loaded:
        worst = max(c["other_load_pct"] for c in loaded)
        lines.append(
            f"- **Shared machine**: other processes used up to {worst:.0f}% of the CPU during "
            f"{len(loaded)} cell(s) (column 'other load'). Paired rounds absorb steady load, "
            "not bursts that hit one side: read those cells' intervals with care, or rerun "
            "them on a quiet machine."
        )
    return lines


def render(summary: dict[str, Any]) -> str:
    from encbench.report import transit  # it uses this module's table()

    cells = summary["cells"]
    moving = summary.get("transit")
    if not cells and moving:
        title = "in-transit encryption"
    elif moving:
        title = "data-at-rest and in-transit encryption"
    else:
        title = "data-at-rest encryption"
    out = [f"# encbench: {title} — profile `{summary['profile']}`", ""]
    if cells:
        out += render_at_rest(summary)
    if moving:
        out += transit.render_section(moving)
    out += render_setup(summary)
    return "\n".join(out) + "\n"


def render_at_rest(summary: dict[str, Any]) -> list[str]:
    cells = summary["cells"]
    by_group = groups(cells)
    out = ["## Summary", ""]
    out += summary_in_words(by_group)
    out += [
        "",
        "Overhead is the cost of encryption: positive means the encrypted server is slower "
        "(TPS) or spends more (latency, CPU). Values are means over paired rounds; the 95% "
        "CI comes from the per-round ratios.",
        "",
    ]
    for (workload, regime), group in by_group.items():
        out += [f"## {workload}, {regime}", "", throughput_table(group), ""]
        cost = cost_table(group)
        if cost.count("\n") > 1:
            out += ["Cost and regime evidence:", "", cost, ""]
        predicted = prediction_table(group)
        if predicted.count("\n") > 1:
            out += [
                "The cipher's own work, from this machine's `openssl speed`:",
                "",
                predicted,
                "",
            ]
    return out


def render_setup(summary: dict[str, Any]) -> list[str]:
    cells = summary["cells"]
    servers = summary.get("servers") or {}
    env = summary.get("environment") or {}
    out = ["## Setup", ""]
    data = servers.get("data", {})
    enc = servers.get("encryption", {})
    if data:
        out.append(
            f"- Data: {data['tables']} tables × {data['table_size']:,} rows "
            f"({data['size_mb']} MB), sysbench `--rand-type` as in the profile."
        )
    for regime, rec in (servers.get("regimes") or {}).items():
        out.append(
            f"- Regime {regime}: innodb_buffer_pool_size = {rec['buffer_pool_mb']} MB, "
            "innodb_flush_method = O_DIRECT."
        )
    if enc:
        out.append(
            f"- Encryption: file_key_management, {enc['algorithm']}, scope `{enc['scope']}`."
        )
    diff = servers.get("option_difference") or {}
    if diff:
        out.append(
            "- The only server options that differ (encrypted adds): "
            + ", ".join(f"`{k}={v}`" for k, v in diff.items())
            + "."
        )
    for variant, p in (servers.get("proofs") or {}).items():
        out.append(
            f"- Proof, {variant}: {p['explanation']} (files scanned: "
            f"{', '.join(p['files_scanned'])})."
        )
    cpu = env.get("cpu", {})
    if cpu:
        flags = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in cpu.get("flags", {}).items())
        out.append(
            f"- Machine: {cpu.get('model', '?')}, {cpu.get('cores', '?')} cores; "
            f"CPU flags: {flags or '?'}."
        )
        out.append(
            f"- Software: {env.get('os')}, kernel {env.get('kernel')}, MariaDB "
            f"{servers.get('mariadb_version') or env.get('mariadb')}, "
            f"{env.get('openssl')}, sysbench {env.get('sysbench')}."
        )
    cap = summary.get("crypto") or {}
    predictions = [c["prediction"] for c in cells if c.get("prediction")]
    if cap and predictions:
        p = predictions[0]
        out.append(
            f"- Cipher capacity: {p['cipher']} at 16 KiB pages, {p['cipher_mb_per_s']:,.0f} MB/s "
            "on one core (`openssl speed -evp`, this machine, this run); the predicted ceiling "
            "is that work as a share of the plain server's mean transaction latency."
        )
    moving = summary.get("transit") or {}
    target = summary["target_halfwidth_pct"] if cells else moving.get("target_halfwidth_pct")
    out.append(
        f"- Statistics: {summary['method']}; rounds interleaved A B, B A, … and added "
        f"until the CI half-width reaches ±{target:g}% or the cell's time budget ends."
    )
    if cells:
        out.append(f"- Write workloads: {summary['write_workload_state']}")
    h = summary["harness"]
    if not cells:
        return out  # the in-transit section gives its own harness figure
    out.append(
        f"- encbench's own CPU during measured windows: {h['cpu_s']:.2f} s over "
        f"{h['measured_wall_s']:.0f} s measured = {h['share_of_machine_pct']:.2f}% of "
        "the machine."
    )
    return out
