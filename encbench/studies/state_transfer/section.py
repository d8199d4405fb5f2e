"""The state-transfer study's part of the report: per cell the time from the joiner's start
to Synced and the donor's stream, plain against encrypted with the paired interval and a
verdict; the bytes, rates and CPU beside them; each rate against this machine's limits
(state_transfer_limits.py); the proof on the wire; and the set-up."""

from __future__ import annotations

from collections.abc import Sequence

from encbench.capacity import FULL_IA32CAP, NO_AESNI_IA32CAP, SEED_STUDY_IA32CAP
from encbench.report.cells import (
    cost_verdict,
    mean_text,
    means_text,
    overhead_cell,
    rounds_text,
    sample_text,
)
from encbench.report.models import Differences, Record, Sample
from encbench.report.study_sections import (
    captured,
    encrypted_side,
    headline_table,
    opening,
    proof_section,
)
from encbench.report.tables import Bullets, Cell, Paragraph, Plot, Section, Table, row
from encbench.studies.state_transfer import limits_section as state_transfer_limits
from encbench.studies.state_transfer import plots as state_transfer_plots
from encbench.studies.state_transfer.models import SstCellSummary, StateTransferSummary

INTRO = (
    "Each round is one full state snapshot transfer (SST) per variant, plain and encrypted in "
    "alternating order (blocks of A B and B A): the joiner is stopped and its data directory "
    "emptied, then started and timed until it is Synced (`wsrep_local_state` 4). Times are "
    "means over rounds with their 95% CI; the cost is the paired Hodges–Lehmann estimate with "
    "its 95% CI (positive: encryption makes it slower), with the same stopping rule as the "
    "other studies."
)
SYNC_NOTE = (
    "The time to Synced includes the joiner's own start-up and, for mariabackup, a fixed "
    "10 s pause of the donor's SST script before it streams (`wsrep_sst_mariabackup`: "
    '"Sleeping before data transfer for SST"), the same for both variants: it dilutes the '
    "ratio. The donor's stream is timed from the script's own log lines (millisecond "
    'timestamps): mariabackup from "Streaming the backup to joiner" to "Total time on '
    'donor", rsync from "Tables flushed" to "Transfer of data done".'
)

# The published study the raw pipelines and the AES-NI mask come from.
STUDY_2017 = 'Percona\'s 2017 "Performance Evaluation of SST Data Transfer: With Encryption"'
PIPELINE_NOTE = (
    f"Rows named `pipeline` are the raw pipelines of {STUDY_2017}, without Galera, to "
    "isolate the transfer: the donor's data directory streamed by `tar -c` (the donor "
    "stopped, as that study did) or by `mariadb-backup --backup --stream=xbstream "
    "--parallel=N` (the donor "
    "running, idle) through socat to `tar -x` or `mbstream -x` into an empty directory on "
    "the joiner's host; encrypted, through socat's openssl address with the run's "
    "certificate (both ends verify). For them the first time is from the sender's start to "
    "the receiver's exit with the target's filesystem synced (`sync -f`), the second to the "
    "receiver's exit; their CPU is the sender's and the receiver's processes. "
    "mariadb-backup 10.11 has no encryption of its own (no `--encrypt`/`--decrypt` as "
    "xtrabackup had, which that study measured): MariaDB's documentation pipes the stream "
    "through `openssl enc` instead, so this study has no such row."
)


TIMES_HEADER = ["SST", "to Synced, plain", "to Synced, encrypted", "cost (95% CI)", "verdict",
                "donor's stream, plain", "stream, encrypted", "stream cost (95% CI)",
                "rounds"]  # fmt: skip


def stream_columns(cell: SstCellSummary) -> list[Cell]:
    """The donor's stream beside the time to Synced: each variant's, its cost; the rounds."""
    v = cell.variants
    stream_cost, _, stream_kind = cost_verdict(cell, "transfer_s", primary=False)
    return row(
        sample_text(v.plain.transfer_s, "s", 2) if v else "–",
        sample_text(v.encrypted.transfer_s, "s", 2) if v else "–",
        stream_cost,
        rounds_text(cell),
        styles={2: stream_kind},
    )


def times_table(cells: Sequence[SstCellSummary], differences: Differences | None = None) -> Table:
    return headline_table(
        cells,
        "sync_s",
        lambda s: sample_text(s, "s", 2),
        stream_columns,
        TIMES_HEADER,
        "Time from the joiner's start to Synced, and the donor's stream alone",
        differences,
    )


def transfer_table(cells: Sequence[SstCellSummary]) -> Table:
    rows = []
    for cell in cells:
        v = cell.variants
        if v is None:
            continue
        rows.append(
            row(
                cell.label,
                means_text(v.plain.link_mib, v.encrypted.link_mib),
                means_text(v.plain.mib_per_s, v.encrypted.mib_per_s, 0),
                means_text(v.plain.donor_cpu_s, v.encrypted.donor_cpu_s, 2),
                means_text(v.plain.joiner_cpu_s, v.encrypted.joiner_cpu_s, 2),
                "; ".join(
                    f"{name} {mean_text(v.plain.stages.get(name), 2)} / "
                    f"{mean_text(v.encrypted.stages.get(name), 2)} s"
                    for name in v.encrypted.stages
                    if "(time=1)" not in name
                ),
            )
        )
    return Table(
        ["SST", "MiB on the link, plain / encrypted", "MiB/s over the stream",
         "donor CPU s", "joiner CPU s", "stages from the scripts' logs, plain / encrypted"],
        rows,
        caption=(
            "Bytes donor → joiner on the joiner's veth; CPU of each node's cgroup (the server, "
            "its SST script and every tool the script starts), means over rounds"
        ),
    )  # fmt: skip


def pause_table(cells: Sequence[SstCellSummary]) -> Table | None:
    """mariabackup's cells: to Synced less the donor's fixed pause, which both variants
    sleep, beside to Synced; None without such a cell."""
    rows = []
    for cell in cells:
        v = cell.variants
        if v is None or v.plain.sync_less_pause_s is None or v.encrypted.sync_less_pause_s is None:
            continue
        cost, verdict, kind = cost_verdict(cell, "sync_less_pause_s", primary=False)
        rows.append(
            row(
                cell.label,
                means_text(v.plain.sync_s, v.encrypted.sync_s, 2),
                sample_text(v.plain.sync_less_pause_s, "s", 2),
                sample_text(v.encrypted.sync_less_pause_s, "s", 2),
                cost,
                verdict,
                styles={5: kind},
            )
        )
    if not rows:
        return None
    return Table(
        ["SST", "to Synced, plain / encrypted (s)", "less the pause, plain",
         "less the pause, encrypted", "cost (95% CI)", "verdict"],
        rows,
        caption=(
            "mariabackup: to Synced less the donor's fixed pause before it streams (the "
            "stage its SST script logs, per run), paired as to Synced is"
        ),
    )  # fmt: skip


def change_text(before: Sample | None, during: Sample | None) -> str:
    """The donor's throughput during the transfer against before it, in % of before (a
    drop is negative)."""
    if before is None or during is None or before.mean <= 0:
        return "–"
    return f"{100.0 * (during.mean / before.mean - 1.0):+.1f}%"


def donor_load_table(cells: Sequence[SstCellSummary]) -> Table | None:
    """The donor's own service under the load, before the joiner started and during the
    transfer, per variant; None without a loaded cell."""
    rows = []
    for cell in cells:
        v = cell.variants
        if v is None or v.plain.donor_tps_during is None or v.encrypted.donor_tps_during is None:
            continue
        comp = cell.comparisons.get("donor_tps_during")
        rows.append(
            row(
                cell.label,
                means_text(v.plain.donor_tps_before, v.encrypted.donor_tps_before, 0),
                sample_text(v.plain.donor_tps_during, "", 0),
                sample_text(v.encrypted.donor_tps_during, "", 0),
                f"{change_text(v.plain.donor_tps_before, v.plain.donor_tps_during)} / "
                f"{change_text(v.encrypted.donor_tps_before, v.encrypted.donor_tps_during)}",
                f"{mean_text(v.plain.donor_p95_before_ms, 2)} → "
                f"{mean_text(v.plain.donor_p95_during_ms, 2)}",
                f"{mean_text(v.encrypted.donor_p95_before_ms, 2)} → "
                f"{mean_text(v.encrypted.donor_p95_during_ms, 2)}",
                overhead_cell(comp) if comp else "–",
            )
        )
    if not rows:
        return None
    return Table(
        ["SST", "donor TPS before, plain / encrypted", "TPS during, plain",
         "TPS during, encrypted", "TPS change, plain / encrypted", "p95 ms before → during, plain",
         "p95 ms before → during, encrypted", "TPS during: encrypted vs plain (95% CI)"],
        rows,
        caption=(
            "The donor's own clients while it serves the transfer: its throughput and p95 "
            "latency over the seconds before the joiner started and over the transfer, means "
            "over rounds; the last column is the paired estimate of its throughput during the "
            "transfer, encrypted against plain, as a cost (positive: the donor served fewer "
            "transactions while the stream was encrypted)"
        ),
    )  # fmt: skip


def donor_load_note(part: StateTransferSummary) -> str:
    load = part.donor_load or {}
    rate = load.get("rate_tps")
    return (
        f"The load on the donor: sysbench `{load.get('workload', '?')}` with "
        f"{load.get('threads', '?')} threads"
        + (f", rate-limited to {rate} transactions/s (`--rate`)" if rate else ", unthrottled")
        + ", over the donor's unix socket, from before each measured transfer until the "
        "joiner is Synced; the window before is the "
        f"{load.get('before_s', '?')} whole seconds after its first, the window during the "
        "whole seconds inside the transfer. Its TPS is the mean of sysbench's per-second "
        "reports in a window, its p95 the median of their per-second 95th percentiles "
        "(with `--rate`, the latency includes the time a transaction waited to start). The "
        "per-cell proof transfers run without it. The load is read-only, so rsync's "
        "`FLUSH TABLES WITH READ LOCK` on the donor does not stop it; it shares the "
        "donor's CPU and disk with the transfer, which the times above include, and the "
        "donor CPU above counts the server's work for the load too (alike on both sides)."
    )


def _elsewhere(hits: dict[str, int]) -> str:
    """The marker outside the SST stream in an encrypted transfer: Galera's own traffic."""
    if not hits:
        return ""
    where = ", ".join(f"port {port}: {n}" for port, n in sorted(hits.items()))
    return (
        f" Outside the SST stream the encrypted transfer still carried the marker in plaintext "
        f"({where}): Galera's write-set preload over the IST port, which `[sst]` does not "
        "encrypt (Galera's own `socket.ssl_*` would; not measured yet)."
    )


def proof_item(label: str, plain: Record, enc: Record) -> str:
    return (
        f"{label}: plain — the donor's marker seen {plain.get('marker_hits')} times in "
        f"{captured(plain)}, transport `{plain.get('joiner_transport')}`; encrypted — "
        f"{encrypted_side(enc)}, transport `{enc.get('joiner_transport')}`."
        + _elsewhere(enc.get("marker_hits_other_ports") or {})
        + _masks(enc.get("openssl_ia32cap") or {}, enc.get("openssl_ia32cap_set"))
    )


def _masks(masks: dict[str, str], launched_with: str | None) -> str:
    """Each node's OpenSSL mask as the proof read it back, or a pipeline's as its launcher
    set it (older records have neither)."""
    if launched_with:
        return f" OPENSSL_ia32cap `{launched_with}`, as both ends were launched (not read back)."
    if not masks:
        return ""
    said = ", ".join(f"{role} `{mask}`" for role, mask in sorted(masks.items()))
    return f" OPENSSL_ia32cap read back from each node: {said}."


def aesni_item(cells: Sequence[SstCellSummary]) -> list[str]:
    """What "AES-NI off" means, when a cell has it."""
    if all(cell.aesni == "on" for cell in cells):
        return []
    study_mask = (
        [
            f"AES-NI off (the 2017 study's mask): `OPENSSL_ia32cap={SEED_STUDY_IA32CAP}` as "
            f"{STUDY_2017} wrote it; with no `:` part OpenSSL 3 also clears CPUID leaf 7 (AVX2, "
            "AVX-512, VAES, BMI2, ADX …), so ChaCha20-Poly1305 and RSA slow too, not only AES. "
            "Its cells have no cipher limit: `openssl speed` is not measured under that mask."
        ]
        if any(cell.aesni == "seed-mask" for cell in cells)
        else []
    )
    return [
        f"AES-NI off: every process of the transfer at both ends (the nodes, and so their SST "
        f"scripts' socat or stunnel; a raw pipeline's socat, tar, rsync) ran with "
        f"`OPENSSL_ia32cap={NO_AESNI_IA32CAP}`, which clears AES-NI and PCLMULQDQ and nothing "
        f"else; the other cells with `{FULL_IA32CAP}`, which clears nothing. The 2017 study's "
        "own mask (no `:` part) also made OpenSSL 3 clear CPUID leaf 7, which slows ChaCha20 "
        "too. "
        "For an SST the per-cell proof read each node's mask back from its process (a raw "
        "pipeline's is as its launcher set it); the cipher limit of those "
        "cells is `openssl speed` under the same mask.",
        *study_mask,
    ]


def setup_items(part: StateTransferSummary) -> list[str]:
    data = part.data or {}
    link = part.link or {}
    rate = link.get("rate_mbit")
    size = data.get("datadir_bytes")
    peer = part.nodes == 3
    joined = "a switch (a bridge) with a veth pair per host" if peer else "a veth pair"
    return [
        f"Cluster: {part.nodes or 2} Galera nodes (MariaDB {part.mariadb_version or '?'}, "
        f"provider {part.galera_version or '?'}), each a sandboxed mariadbd in its own network "
        f"namespace, joined by {joined}"
        + (f" limited to {rate:g} Mbit/s (tbf)" if rate else " (no rate limit)")
        + (
            "; the third node (the peer) joins once and stays Synced while the joiner rejoins "
            "a cluster that keeps its quorum, every transfer pinned to the donor "
            "(`wsrep_sst_donor`)"
            if peer
            else ""
        )
        + "; the donor bootstraps the cluster and holds "
        f"{data.get('tables', '?')} × {data.get('table_size', '?')} sysbench rows"
        + (f" ({size / 2**20:,.0f} MiB of data directory)" if isinstance(size, int) else "")
        + ".",
        "Encrypted: `[sst] ssl-mode=REQUIRED` with the run's certificate "
        f"({part.key_type or '?'}; {part.certificate or '?'}) — mariabackup streams through "
        "socat's openssl address (a TLS 1.2 suite: `sockopt=,cipher=…,max-version=TLS1.2`), "
        "rsync through stunnel; peers are not verified (REQUIRED, not VERIFY_CA). Plain: "
        "`ssl-mode=DISABLED` and no certificate.",
        "Per-run proof: both nodes' SST logs must say how the stream went (socat's openssl "
        "address or stunnel for encrypted, plain socat or rsync for plain). Per-cell proof: one "
        "transfer per variant with the joiner's link captured (AF_PACKET): the plain stream "
        "must show the donor's marker rows (the positive control), the encrypted one must not, "
        "and its ServerHello names the protocol and suite.",
    ]


def at_rest_items(part: StateTransferSummary) -> list[str]:
    """The set-up line of a donor encrypted at rest, when the run had one."""
    found = part.at_rest
    if not found:
        return []
    return [
        "Encrypted at rest, both variants: every node runs with "
        f"`{found.get('key_management', '?')}` ({found.get('algorithm', '?')}) and the "
        "run's one key file, which the joiner is given too, with `innodb_encrypt_tables=ON`; "
        "so the transfer is a plain against an encrypted stream of data that is encrypted on "
        f"disk either way. Proven: the donor's {found.get('donor_tables_encrypted', '?')} of "
        f"{found.get('tables', '?')} sysbench tables encrypted per "
        "`INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION` at set-up; after every transfer "
        "the Synced joiner reads each table back with the donor's row count and reports it "
        f"encrypted too. The marker table is {found.get('marker_table', '?')}: the wire "
        "proof's positive control needs it in plaintext on disk."
    ]


def pipeline_items(part: StateTransferSummary) -> list[str]:
    found = part.pipelines or {}
    donor = found.get("donor") or {}
    return [
        f"Raw pipelines: socat's buffer (`-b`) {found.get('socat_buffer_kib', '?')} KiB; "
        f"the page cache {found.get('page_cache', '?')}; the donor for tar and rsync "
        f"{donor.get('tar and rsync', '?')}, for xbstream {donor.get('xbstream', '?')}; "
        "per-run proof: "
        "socat's own log at both ends (`-d -d`: the TLS protocol and suite it negotiated, or "
        "a plain transfer loop)."
    ]


def sections(part: StateTransferSummary) -> list[Section]:
    blocks = opening(INTRO, part.differences)
    cells = part.cells
    blocks += [
        times_table(cells, part.differences),
        Plot(
            lambda: state_transfer_plots.times_and_rates_svg(cells),
            "Per transfer, the mean of each variant with the 95% CI of that mean: the time "
            "from the joiner's start to Synced, and the MiB/s over the donor's stream with "
            "this machine's measured limits (disk, link, and for the encrypted stream its "
            "cipher) as marks across each row.",
        ),
        Plot(
            lambda: state_transfer_plots.cost_svg(cells),
            "Above 0: encrypted takes longer; the paired estimates of the table's cost columns.",
        ),
        transfer_table(cells),
        Paragraph(SYNC_NOTE),
    ]
    paused = pause_table(cells)
    if paused is not None:
        blocks.append(paused)
    served = donor_load_table(cells)
    if served is not None:
        blocks += [served, Paragraph(donor_load_note(part))]
    if part.pipelines is not None:
        blocks.append(Paragraph(PIPELINE_NOTE))
    limits = state_transfer_limits.section(part)
    if limits is not None:
        blocks.append(limits)
    blocks += [
        proof_section("State transfer", part.cells, proof_item),
        Section(
            "State transfer: set-up",
            [
                Bullets(
                    setup_items(part)
                    + at_rest_items(part)
                    + (pipeline_items(part) if part.pipelines else [])
                    + aesni_item(part.cells)
                )
            ],
            level=3,
        ),
    ]
    return [Section("State transfer (Galera SST): plain against encrypted", blocks)]


def calibration_setup(part: StateTransferSummary) -> list[str]:
    """A calibration's Setup line of the state-transfer study."""
    return [
        "State transfer: one donor; A and B are the same plain stream — an SST to the "
        "other Galera node with `[sst] ssl-mode=DISABLED` and no certificate, or a raw "
        "pipeline's plain socat — each run's own logs (the SST scripts', socat's) checked "
        "to say plain at both ends, and each cell's two captured proof transfers showing "
        "the donor's marker in the stream."
    ]
