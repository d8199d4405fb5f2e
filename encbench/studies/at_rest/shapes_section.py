"""The report's "CPU per shape": what encryption costs each instance shape (servers/shapes.py),
shaped like the Alibaba Cloud "ApsaraDB RDS: TDE test report"'s comparison of a 4-core and an
8-core RDS instance (encryption added 0.06–4.22% CPU on the 4-core, 0.12–2.86% on the 8-core).

Per workload, setting and thread count, one row per shape: the cost in throughput and in the
server's CPU per transaction, each the cell's Hodges–Lehmann estimate with its 95% interval.
Then that report's claim as a contrast: "the smaller shape pays more" — the mean cost over the
cells both shapes measured, smaller minus larger, with the interval of report/claims.py (cells
independent, each error from its own interval).  A run without shapes gets no such section.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from encbench.report import plots
from encbench.report.cells import fmt, overhead_cell
from encbench.report.models import Estimate, Record
from encbench.report.tables import Block, Bullets, Paragraph, Plot, Section, Table, row
from encbench.studies.at_rest import claims
from encbench.studies.at_rest import plots as at_rest_plots
from encbench.studies.at_rest.claims import CellCost, Contrast, cell_cost, contrast
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary

METRICS = (("tps", "throughput"), ("cpu_ms_per_txn", "server CPU per transaction"))
CLAIM = "the smaller shape pays more"
METHOD = (
    "Cost = −ln(encrypted/plain TPS) ×100 for throughput and +ln(encrypted/plain CPU ms per "
    "transaction) ×100 for CPU (≈ the overhead in %); the difference is the smaller shape's "
    "mean cost minus the larger's over the cells both measured, its 95% interval from the "
    "cells' own intervals (as if normal, cells independent). It holds where the interval "
    "lies above 0."
)


def declared(servers: Record | None) -> dict[str, Record]:
    """The shapes at-rest.json recorded (per configuration, when those vary), by name."""
    found: dict[str, Record] = {}
    records = [servers or {}, *((servers or {}).get("configurations") or {}).values()]
    for rec in records:
        for name, entry in (rec.get("shapes") or {}).items():
            found.setdefault(name, entry.get("shape") or {})
    return found


def ordered_shapes(cells: Sequence[AtRestCell], servers: Record | None) -> list[str]:
    """Smallest first: fewer CPUs, then less quota, then less memory, then fewer IOPS (as
    listed, where the record does not say)."""
    names = list(dict.fromkeys(c.shape for c in cells if c.shape))
    specs = declared(servers)

    def size(name: str) -> tuple[float, float, float, float]:
        s = specs.get(name, {})
        cpus = float(s.get("cpus") or math.inf)
        quota = s.get("cpu_quota")
        memory = s.get("memory_mib")
        iops = s.get("iops")
        return (
            cpus,
            float(quota) if quota is not None else cpus,
            float(memory) if memory is not None else math.inf,
            float(iops) if iops is not None else math.inf,
        )

    return sorted(names, key=lambda n: (size(n), names.index(n)))


def _unshaped(cell: AtRestCell) -> str:
    return cell.setting.removesuffix(f", shape {cell.shape}")


def metric_cost(cell: AtRestCell, metric: str) -> CellCost | None:
    """A cell's cost in one metric, grouped by its setting without the shape (claims.py)."""
    return cell_cost(cell, metric, _unshaped(cell))


def smaller_pays_more(cells: Sequence[AtRestCell], order: list[str]) -> list[Contrast]:
    """Per metric, the smallest shape against each larger one, over the cells both have."""
    out = []
    for metric, words in METRICS:
        costs: dict[str, dict[tuple[str, str, int], CellCost]] = {}
        for c in cells:
            cost = metric_cost(c, metric)
            if cost is not None:
                costs.setdefault(c.shape, {})[(c.workload, cost.setting, c.threads)] = cost
        small = order[0] if order else ""
        for large in order[1:]:
            both = sorted(set(costs.get(small, {})) & set(costs.get(large, {})))
            if not both:
                continue
            a = [costs[small][k] for k in both]
            b = [costs[large][k] for k in both]
            out.append(contrast(CLAIM, f"{words}: {small} vs {large}", a, b))
    return out


def _cost_range(cells: Sequence[AtRestCell], metric: str) -> str:
    values = [c.comparisons[metric].overhead_pct for c in cells if metric in c.comparisons]
    if not values:
        return "not measured"
    if len(values) == 1:
        return f"{values[0]:+.2f}%"
    return f"{min(values):+.2f}…{max(values):+.2f}%"


def _spec_words(spec: Record) -> str:
    """A recorded shape in words: "1 CPU, quota 0.5 CPU, 512 MiB, 7,000 IOPS"."""
    if not spec.get("cpus"):
        return ""
    cpus = int(spec["cpus"])
    words = [f"{cpus} CPU{'s' if cpus > 1 else ''}"]
    if spec.get("cpu_quota") is not None:
        words.append(f"quota {spec['cpu_quota']:g} CPU")
    if spec.get("memory_mib") is not None:
        words.append(f"{spec['memory_mib']:,} MiB")
    if spec.get("iops") is not None:
        words.append(f"{spec['iops']:,} IOPS")
    return f" ({', '.join(words)})"


def in_words(cells: Sequence[AtRestCell], order: list[str], servers: Record | None) -> list[str]:
    """Per shape the published report's sentence: the range of the costs over its measured
    cells."""
    specs = declared(servers)
    lines = []
    for name in order:
        mine = [c for c in cells if c.shape == name and c.rounds and c.comparisons]
        if not mine:
            lines.append(f"**{name}**: not measured yet.")
            continue
        what = _spec_words(specs.get(name, {}))
        lines.append(
            f"**{name}**{what}: encryption cost {_cost_range(mine, 'tps')} of throughput and "
            f"changed the server's CPU per transaction by {_cost_range(mine, 'cpu_ms_per_txn')} "
            f"over {len(mine)} cell(s) (point estimates; the table gives each interval)."
        )
    return lines


def shape_table(cells: Sequence[AtRestCell], order: list[str]) -> Table:
    rows = []
    keyed: dict[tuple[str, str, int], dict[str, AtRestCell]] = {}
    for c in cells:
        keyed.setdefault((c.workload, _unshaped(c), c.threads), {})[c.shape] = c
    for (workload, setting, threads), by_shape in keyed.items():
        for c in (by_shape[name] for name in order if name in by_shape):
            name = c.shape
            if not c.rounds or c.variants is None:
                rows.append(row(workload, setting, str(threads), name, "–", "–", "–", c.status))
                continue
            tps, cpu = c.comparisons["tps"], c.comparisons.get("cpu_ms_per_txn")
            enc, pla = c.variants.encrypted, c.variants.plain
            cpu_ms = (
                f"{fmt(enc.cpu_ms_per_txn.mean, 3)} / {fmt(pla.cpu_ms_per_txn.mean, 3)}"
                if enc.cpu_ms_per_txn and pla.cpu_ms_per_txn
                else "not measured"
            )
            rows.append(
                row(
                    workload,
                    setting,
                    str(threads),
                    name,
                    f"{fmt(enc.tps.mean)} / {fmt(pla.tps.mean)}",
                    overhead_cell(tps),
                    cpu_ms,
                    overhead_cell(cpu) if cpu else "not measured",
                    styles={5: tps.kind, 7: cpu.kind if cpu else "na"},
                )
            )
    header = [
        "workload",
        "setting",
        "threads",
        "shape",
        "TPS (enc / plain)",
        "TPS cost (95% CI)",
        "server CPU ms/txn (enc / plain)",
        "CPU change (95% CI)",
    ]
    return Table(header, rows, caption="Cost of encryption per instance shape")


def claim_table(contrasts: list[Contrast]) -> Table:
    rows = [
        row(
            c.claim,
            c.compared,
            f"{c.difference:+.1f} ({c.ci[0]:+.1f} … {c.ci[1]:+.1f})",
            str(c.cells[0]),
            c.verdict,
            styles={4: c.kind},
        )
        for c in contrasts
    ]
    header = ["claim", "compared", "difference in cost, points (95% CI)", "cells", "verdict"]
    return Table(header, rows, notes=[METHOD])


def _plot(cells: Sequence[AtRestCell], order: list[str], workload: str, setting: str) -> Plot:
    groups: list[tuple[Sequence[int], Mapping[str, Sequence[Estimate]]]] = []
    for name in order:
        key = (name, workload, setting)
        here = [c for c in cells if (c.shape, c.workload, _unshaped(c)) == key]
        mine = [
            c for c in at_rest_plots.measured(here) if all(m in c.comparisons for m, _ in METRICS)
        ]
        by_metric: dict[str, Sequence[Estimate]] = {
            m: [c.comparisons[m] for c in mine] for m, _ in METRICS
        }
        groups.append(([c.threads for c in mine], by_metric))
    title = f"{workload}, {setting}"
    return Plot(
        lambda: plots.comparison_svg(groups, order, f"{title}, per shape"),
        "Cost of encryption per shape against threads: throughput (left) and server CPU per "
        "transaction (right); bars: 95% CI.",
    )


def sections(part: AtRestSummary) -> list[Section]:
    shaped = [c for c in part.cells if c.shape]
    if not shaped:
        return []
    order = ordered_shapes(shaped, part.servers)
    blocks: list[Block] = [
        Paragraph(
            "Each shape confines both servers (plain and encrypted) to its CPUs, memory and "
            f"IOPS with cgroups; {claims.SOURCE} compared a 4-core and an 8-core RDS instance "
            "(encryption added 0.06–4.22% CPU on the 4-core, 0.12–2.86% on the 8-core)."
        ),
        Bullets(in_words(shaped, order, part.servers)),
        shape_table(shaped, order),
    ]
    contrasts = smaller_pays_more(shaped, order)
    if contrasts:
        blocks.append(claim_table(contrasts))
    settings = dict.fromkeys((c.workload, _unshaped(c)) for c in shaped)
    blocks += [_plot(shaped, order, w, s) for w, s in settings]
    return [Section("CPU per shape", blocks)]
