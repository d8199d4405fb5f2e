"""The replication study's part of the report: per cell the TPS of a write workload on a
2-node cluster, plain cluster against Galera's own TLS, with the paired interval and a
verdict; the bytes between the nodes and both nodes' CPU per transaction beside it; the proof
on the wire; and the set-up."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report import suspect
from encbench.report.cells import (
    cost_verdict,
    flagged_cost,
    means_text,
    rounds_text,
    sample_text,
    verdict_notes,
)
from encbench.report.models import Differences, NoiseFloor, Record
from encbench.report.study_sections import (
    captured,
    encrypted_side,
    headline_table,
    opening,
    proof_section,
)
from encbench.report.tables import Bullets, Paragraph, Plot, Section, Table, row
from encbench.studies.replication import plots as replication_plots
from encbench.studies.replication.models import ReplicationCellSummary, ReplicationSummary
from encbench.studies.replication.records import ReplicationRecord

INTRO = (
    "Each round runs the cell's sysbench workload once against node 1 of each of two 2-node "
    "Galera clusters that are up at the same time — a plain one and one with Galera's own TLS "
    "(`socket.ssl_key/cert/ca`) — in alternating order (blocks of A B and B A). Every commit "
    "is certified with node 2 and replicated to it over the link between the two emulated "
    "hosts. TPS are means over rounds with their 95% CI; the cost is the paired "
    "Hodges–Lehmann estimate with its 95% CI, with the same stopping rule as the other "
    "studies."
)


def tps_table(
    cells: Sequence[ReplicationCellSummary], differences: Differences | None = None
) -> Table:
    return headline_table(
        cells,
        "tps",
        lambda s: sample_text(s, "", 1),
        lambda cell: row(rounds_text(cell)),
        ["cell", "TPS, plain cluster", "TPS, socket.ssl", "cost (95% CI)", "verdict", "rounds"],
        "Transactions per second against node 1, plain cluster against Galera's TLS",
        differences,
    )


def per_txn_table(cells: Sequence[ReplicationCellSummary]) -> Table:
    rows = []
    for cell in cells:
        v = cell.variants
        if v is None:
            continue
        link_cost, _, link_kind = cost_verdict(cell, "link_bytes_per_txn", primary=False)
        cpu_cost, _, cpu_kind = cost_verdict(cell, "cpu_ms_per_txn", primary=False)
        cpu = cell.comparisons.get("cpu_ms_per_txn")
        cpu_cost = flagged_cost(cpu) if cpu else cpu_cost
        rows.append(
            row(
                cell.label,
                means_text(v.plain.link_bytes_per_txn, v.encrypted.link_bytes_per_txn, 0),
                link_cost,
                means_text(v.plain.cpu_ms_per_txn, v.encrypted.cpu_ms_per_txn, 3),
                cpu_cost,
                means_text(v.plain.node1_cpu_ms_per_txn, v.encrypted.node1_cpu_ms_per_txn, 3),
                means_text(v.plain.node2_cpu_ms_per_txn, v.encrypted.node2_cpu_ms_per_txn, 3),
                means_text(v.plain.latency_p95_ms, v.encrypted.latency_p95_ms, 1),
                styles={2: link_kind, 4: cpu_kind},
            )
        )
    comps = [c.comparisons.get("cpu_ms_per_txn") for c in cells]
    return Table(
        ["cell", "bytes on the link per txn, plain / TLS", "cost", "CPU ms per txn (both "
         "nodes)", "cost", "node 1 CPU ms/txn", "node 2 CPU ms/txn", "p95 latency ms"],
        rows,
        notes=verdict_notes(comps, None),
        caption=(
            "Bytes: both directions of node 2's veth over the run; CPU: each node's cgroup, "
            "until node 2 had applied every write set of the run; means over rounds"
        ),
    )  # fmt: skip


def proof_item(label: str, plain: Record, enc: Record) -> str:
    return (
        f"{label}: plain cluster — node 1's marker rows seen {plain.get('marker_hits')} times "
        f"({plain.get('marker_hits_by_port')} by port) in {captured(plain)}; TLS cluster — "
        f"{encrypted_side(enc)}; node 2 rejoined in {plain.get('rejoin_s', 0):.1f} s plain, "
        f"{enc.get('rejoin_s', 0):.1f} s with TLS."
    )


def setup_items(part: ReplicationSummary) -> list[str]:
    data = part.data or {}
    rate = (part.link or {}).get("rate_mbit")
    return [
        f"Two clusters of 2 Galera nodes (MariaDB {part.mariadb_version or '?'}, provider "
        f"{part.galera_version or '?'}), up at once; each node a sandboxed mariadbd in its own "
        "network namespace, each cluster's two joined by a veth pair of their own"
        + (f" limited to {rate:g} Mbit/s (tbf)" if rate else " (no rate limit)")
        + f"; {data.get('tables', '?')} × {data.get('table_size', '?')} sysbench rows, "
        "loaded on node 1 and replicated.",
        "TLS cluster: `socket.ssl=YES`, `socket.ssl_key`, `socket.ssl_cert`, `socket.ssl_ca` "
        f"from the run's PKI ({part.key_type or '?'}; {part.certificate or '?'}) on both "
        "nodes: group communication (port 4567) and IST (4568). Plain cluster: none.",
        "Per-run proof: both nodes' `wsrep_provider_options` say `socket.ssl = YES` exactly in "
        "the TLS cluster, and node 1 sees a cluster of 2 at the run's end. Per-cell proof: per "
        "cluster, node 2's link captured (AF_PACKET) while node 2 rejoins, marker rows are "
        "written on node 1 and the workload runs 3 s: the plain link must carry the marker on "
        "port 4567 (the positive control), the TLS one must not carry it anywhere, and must "
        "show a ServerHello.",
    ]


# The figures a gain flags (Estimate.implausible_gain), in the summary's words.
FLAGGED = {
    "tps": "TPS",
    "latency_avg_ms": "average latency",
    "latency_p95_ms": "p95 latency",
    "cpu_ms_per_txn": "CPU per transaction",
}


def implausible_items(cells: Sequence[ReplicationCellSummary]) -> list[str]:
    """Each cell where the TLS cluster came out better in a figure encryption only adds work
    to, with those figures."""
    return suspect.implausible_items(((c.label, c) for c in cells), FLAGGED)


def sections(part: ReplicationSummary, noise: NoiseFloor | None = None) -> list[Section]:
    blocks = opening(INTRO, part.differences)
    warning = suspect.faster_warning(
        implausible_items(part.cells), suspect.CLUSTERS, noise, ReplicationRecord.STUDY
    )
    if warning:
        blocks.append(Paragraph(warning))
    cells = part.cells
    blocks += [
        tps_table(cells, part.differences),
        Plot(
            lambda: replication_plots.tps_svg(cells),
            "Per workload, the mean TPS of each cluster with the 95% CI of that mean.",
        ),
        Plot(
            lambda: replication_plots.replication_cost_svg(cells),
            "Above 0: the TLS cluster commits fewer transactions per second, or spends more "
            "CPU per transaction; the paired estimates of the tables' cost columns.",
        ),
        per_txn_table(cells),
        proof_section("Replication", part.cells, proof_item),
        Section("Replication: set-up", [Bullets(setup_items(part))], level=3),
    ]
    return [Section("Replication (Galera's own TLS on writes): plain against socket.ssl", blocks)]
