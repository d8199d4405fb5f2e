"""The rejoin study's part of the report: per cell (IST or SST) the time from node 2's start
to Synced, plain cluster against socket.ssl, with the paired interval and a verdict; the
bytes and CPU beside it; and the proof on the wire."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.report.cells import means_text, rounds_text, sample_text
from encbench.report.models import Differences, Record
from encbench.report.study_sections import headline_table, opening, proof_section, server_hello
from encbench.report.tables import Cell, Plot, Section, Table, row
from encbench.studies.rejoin import plots as rejoin_plots
from encbench.studies.rejoin.models import RejoinCellSummary, RejoinSummary

INTRO = (
    "Each round stops node 2 of each cluster (plain, and with Galera's own TLS), lets node 1 "
    "commit the cell's transactions without it, and times node 2 from its start to Synced: "
    "by IST (its data kept; Galera sends the missed write sets from node 1's gcache over its "
    "own connection, which only socket.ssl encrypts) or by a full SST (its data directory "
    "emptied; rsync copies node 1's, plain in both clusters, then IST sends the rest). Times "
    "are means over rounds with their 95% CI; the cost is the paired Hodges–Lehmann estimate."
)


HEADER = ["rejoin", "to Synced, plain", "to Synced, socket.ssl", "cost (95% CI)", "verdict",
          "MiB on the link, plain / TLS", "node 1 CPU s", "node 2 CPU s", "rounds"]  # fmt: skip


def beside(cell: RejoinCellSummary) -> list[Cell]:
    """The bytes and both nodes' CPU beside the time to Synced, and the rounds."""
    v = cell.variants
    return row(
        means_text(v.plain.link_mib, v.encrypted.link_mib, 2) if v else "–",
        means_text(v.plain.node1_cpu_s, v.encrypted.node1_cpu_s, 2) if v else "–",
        means_text(v.plain.node2_cpu_s, v.encrypted.node2_cpu_s, 2) if v else "–",
        rounds_text(cell),
    )


def table(cells: Sequence[RejoinCellSummary], differences: Differences | None = None) -> Table:
    return headline_table(
        cells,
        "sync_s",
        lambda s: sample_text(s, "s", 2),
        beside,
        HEADER,
        "Node 2 from its start to Synced, plain cluster against Galera's TLS",
        differences,
    )


def proof_item(label: str, plain: Record, enc: Record) -> str:
    return (
        f"{label}: plain cluster — the marker rows node 2 missed seen "
        f"{plain.get('marker_hits_by_port')} (by port); TLS cluster — "
        f"{enc.get('marker_hits_by_port') or 'none'} (by port; port 4444 is the rsync SST "
        f"stream, which socket.ssl does not cover), {server_hello(enc)}."
    )


def sections(part: RejoinSummary) -> list[Section]:
    blocks = opening(INTRO, part.differences)
    cells = part.cells
    blocks += [
        table(cells, part.differences),
        Plot(
            lambda: rejoin_plots.rejoin_svg(cells),
            "Per transfer, node 2's mean time to Synced in each cluster with the 95% CI of "
            "that mean.",
        ),
        Plot(
            lambda: rejoin_plots.rejoin_cost_svg(cells),
            "Above 0: node 2 of the TLS cluster takes longer to be Synced; the paired "
            "estimates of the table's cost column.",
        ),
        proof_section("Rejoin", part.cells, proof_item),
    ]
    return [Section("Rejoin (IST against SST): plain against socket.ssl", blocks)]
