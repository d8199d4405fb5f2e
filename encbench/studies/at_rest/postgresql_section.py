"""PostgreSQL's cells in the at-rest study's section of the report: per regime, a table of
plain against fscrypt transactions per second (pgbench's own figure) with the paired cost
and its verdict, what each server's page cache held against the data, a plot of the cost per
row, and how the filesystems were made, which kernel cipher ran and how it was proven."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from encbench.report import plots
from encbench.report.cells import verdict_notes
from encbench.report.models import NoiseFloor, Record, Spread
from encbench.report.tables import Block, Bullets, Paragraph, Plot, Section, Table
from encbench.studies.at_rest import kernel_ciphers, kind_section
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary, PgServers
from encbench.studies.at_rest.section import filesystem_proof_lines, images_made

TITLE = "PostgreSQL at rest: what filesystem encryption (fscrypt) costs"
REGIME_TITLES = {
    "in-memory": "In memory: the data in shared_buffers",
    "io-bound": "Io-bound: the data well above shared_buffers and the page cache",
}
WORKLOADS = {
    "tpcb_like": "TPC-B-like (pgbench default)",
    "select_only": "select-only (-S)",
    "oltp_read_only": "oltp_read_only (sysbench)",
    "oltp_point_select": "oltp_point_select (sysbench)",
    "oltp_read_write": "oltp_read_write (sysbench)",
}
INTRO = (
    "Community PostgreSQL has no encryption at rest of its own: its users encrypt below it. "
    "Each row pairs the same pgbench against two PostgreSQL servers, identical but for the "
    "filesystem under their data directory: plain ext4, and ext4 with fscrypt (fs), each on "
    "its own loop-mounted image of the same size, in alternating rounds. Transactions per "
    "second are pgbench's own, means over rounds with their 95% CI; 'lost to fscrypt' is the "
    "paired cost with its 95% CI, positive when fs is slower, as in the verdict."
)
HOW_IT_COSTS = (
    "Where fscrypt costs: the kernel decrypts a page when it reads it from the device into "
    "the page cache and encrypts it when it writes it back; a read served by shared_buffers "
    "or by the page cache costs nothing more. So the in-memory rows can only show writes "
    "(WAL and checkpoints) and the io-bound rows show the reads as well."
)
MIB = 2**20
Cells = Sequence[AtRestCell]


def _cache(cell: AtRestCell) -> str:
    assert cell.variants is not None
    p, e = cell.variants.plain, cell.variants.encrypted
    most = [v.page_cache_mb.mean for v in (p, e) if v.page_cache_mb is not None]
    shares = [v.cache_share_of_data or 0.0 for v in (p, e)]
    if len(most) < 2:
        return "–"
    return f"{most[0]:,.0f} / {most[1]:,.0f} (at most {100 * max(shares):.0f}% of the data)"


label = kind_section.label


def _mean(spread: Spread | None, digits: int) -> str:
    return "–" if spread is None else f"{spread.mean:.{digits}f}"


def _cpu(cell: AtRestCell) -> str:
    """The server's CPU per transaction, fs / plain; a write cell's with its CHECKPOINT."""
    assert cell.variants is not None
    p, e = cell.variants.plain, cell.variants.encrypted
    text = f"{_mean(e.cpu_ms_per_txn, 3)} / {_mean(p.cpu_ms_per_txn, 3)}"
    if p.checkpoint_s is not None and e.checkpoint_s is not None:
        text += f" (CHECKPOINT {e.checkpoint_s.mean:.2f} / {p.checkpoint_s.mean:.2f} s)"
    return text


def cells_table(cells: Cells, part: AtRestSummary) -> Table:
    rows = [kind_section.tps_row(c, WORKLOADS, [_cpu, _cache]) for c in cells]
    header = [
        "workload",
        "clients",
        "rounds",
        "plain tps (95% CI)",
        "fs tps (95% CI)",
        "lost to fscrypt (95% CI)",
        "verdict",
        "server CPU ms per transaction, fs / plain",
        "page cache, mean MiB: plain / fs",
    ]
    notes = verdict_notes([c.comparisons.get("tps") for c in cells], part.differences)
    return Table(header, rows, notes=notes)


def data_mib(part: PgServers) -> float:
    return max((part.data_bytes or {}).values(), default=0) / MIB


def regime_note(regime: str, part: PgServers) -> str:
    """What the regime gave each server, against the data."""
    r: Record = (part.regimes or {}).get(regime) or {}
    data = data_mib(part)
    memory = (
        f"each server in a memory group of {r.get('memory_limit_mb', 0):,} MB (cgroup "
        f"v{r.get('cgroup_version', '?')}: shared_buffers and an allowance for its backends "
        "and the page cache of its files), whose cached pages were emptied before it started"
    )
    if regime == "in-memory":
        blocks = [s.get("prewarmed_blocks", 0) for s in (r.get("servers") or {}).values()]
        return (
            f"shared_buffers {r.get('shared_buffers_mb', 0):,} MB, above the {data:,.0f} MiB of "
            f"data, which was read into them before the first row (pg_prewarm: "
            f"{max(blocks, default=0):,} blocks); {memory}."
        )
    return (
        f"shared_buffers {r.get('shared_buffers_mb', 0):,} MB against {data:,.0f} MiB of data; "
        f"{memory}: PostgreSQL reads through the page cache, and without that limit the "
        "machine's memory would hold the data. The last column is the most the group's page "
        "cache held at the end of a run (memory.stat's cache less its shared memory, which "
        "is shared_buffers), and what share of the data that is; the loop devices read their "
        "images with direct I/O, so the host's cache does not serve them either."
    )


def _cost_svg(cells: Cells, regime: str) -> str | None:
    measured = [c for c in cells if c.comparisons.get("tps")]
    return plots.cost_rows_svg(
        [f"{WORKLOADS.get(c.workload, c.workload)}, {c.threads} cl" for c in measured],
        [("tps", [c.comparisons["tps"] for c in measured])],
        REGIME_TITLES[regime].split(":")[0],
        f"pg-at-rest-{regime}",
        xlabel="share of the rate lost to fscrypt (%)",
    )


def sections(
    part: AtRestSummary, cells: Cells, noise: NoiseFloor | None = None, *, alone: bool
) -> list[Section]:
    """PostgreSQL's section of the study: its `cells`; the study's differences across cells
    (Holm's, over every kind's cells) where it is the study's only kind (`alone`), else the
    first kind's section says them."""
    servers = part.postgresql or PgServers(scale=0)
    blocks: list[Block] = [Paragraph(INTRO), Paragraph(HOW_IT_COSTS)]
    summary = kind_section.summary_items(part, cells, noise, alone)
    if summary:
        blocks.append(Bullets(summary))
    for regime, title in REGIME_TITLES.items():
        group = [c for c in cells if c.regime == regime]
        if not group:
            continue
        plot = Plot(partial(_cost_svg, group, regime), f"{title}: cost of fscrypt per row")
        note = Paragraph(regime_note(regime, servers))
        blocks.append(Section(title, [note, cells_table(group, part), plot], level=3))
    lines = setup(servers, cells, part)
    blocks.append(Section("PostgreSQL at-rest setup and proof", [Bullets(lines)], 3))
    return [Section(TITLE, blocks)]


def cipher_lines(fs: Record) -> list[str]:
    """The kernel's implementation of each mode of the policy, and whether it runs on the
    CPU's AES instructions."""
    out = kernel_ciphers.cipher_lines(fs, " here")
    ciphers: list[Record] = fs.get("ciphers") or []
    contents: Record = next((c for c in ciphers if c.get("role") == "contents"), {})
    if contents.get("driver") and not contents.get("aes_ni") and fs.get("cpu_aes"):
        out.append(
            "The CPU has AES instructions and this kernel's driver for the contents does not "
            "use them: the filesystem's AES runs in software here, and a kernel with an AES-NI "
            "driver (aesni_intel) would cost less."
        )
    return out


def filesystem_lines(fs: Record) -> list[str]:
    policy = fs.get("policy") or {}
    out = [
        f"{images_made(fs)} alike; the fs side's directory has an fscrypt "
        f"v{policy.get('version', 2)} policy "
        f"(contents {policy.get('contents', '?')}, filenames {policy.get('filenames', '?')}) "
        "with a random 512-bit key made for this run, added to that filesystem's keyring and "
        "removed at the end.",
        *cipher_lines(fs),
    ]
    return out + filesystem_proof_lines(fs)


def setup(part: PgServers, cells: Cells, study: AtRestSummary) -> list[str]:
    user = f", run as the `{part.server_user}` user" if part.server_user else ""
    out = [
        f"Servers: PostgreSQL {part.postgresql_version or '?'}, two sandboxes{user}, the same "
        f"settings but for the filesystem under them; pgbench's tables at scale {part.scale} "
        f"({data_mib(part):,.0f} MiB each, pg_database_size after loading).",
        "Clients: pgbench over each server's private socket, one thread per client, no vacuum "
        "before a run (-n).",
        "Checkpoints: every run began after a CHECKPOINT, outside its window, so no earlier "
        "run's dirty pages were written (and encrypted) during it; a TPC-B-like run's window "
        "stays open through a CHECKPOINT after pgbench, so its server CPU counts writing the "
        "pages it dirtied, and on fs encrypting them (the kernel encrypts a page only when it "
        "is written back). Transactions per second and latency are pgbench's own.",
        "Proof: after loading, a random marker row was written through each server, which was "
        "then stopped (a fast shutdown: a checkpoint writes every page), the filesystems "
        "synced, and each raw image scanned: the marker must be in plain's and absent from "
        "fs's, whose names listed without the key must be none of the real ones. Every run "
        "was checked to be on its own image's loop device and, io-bound, to have held less "
        "page cache than the data.",
    ]
    if part.filesystem:
        out += filesystem_lines(part.filesystem)
    failed = [
        f"{label(c)} {name} {v.errors:,}"
        for c in cells
        if c.variants
        for name, v in (("plain", c.variants.plain), ("fs", c.variants.encrypted))
        if v.errors
    ]
    if failed:
        out.append("Transactions pgbench counted as failed: " + "; ".join(failed) + ".")
    h = study.harness
    if h.measured_wall_s:
        out.append(
            f"encbench's own CPU during the measured windows: {h.cpu_s:.2f} s over "
            f"{h.measured_wall_s:.0f} s measured ({h.share_of_machine_pct:.2f}% of the machine)."
        )
    out.append(
        "Not measured here: block-device encryption (dm-crypt/LUKS), a database's own TDE "
        "(community PostgreSQL has none), and a disk of the machine's own under the servers: "
        "both images are files on the results directory's disk."
    )
    return out
