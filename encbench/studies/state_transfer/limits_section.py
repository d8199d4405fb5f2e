"""The state-transfer report's limits (studies/state_transfer/limits.py): per cell and
variant its MiB/s as a percentage of the lowest of the disk's, the link's and — encrypted —
the cipher's limit, the resource that bound it or that none did; how each limit was
measured; and the issue's benchmark in words: the best encrypted pipeline within 10% of its
limit, or which resource it stayed below and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from encbench.report.models import Record
from encbench.report.tables import Block, Bullets, Paragraph, Section, Table, row
from encbench.studies.state_transfer import limits as sst_limits
from encbench.studies.state_transfer.models import SstCellSummary, SstLimit, StateTransferSummary

ORDER = (sst_limits.DISK_READ, sst_limits.DISK_WRITE, sst_limits.LINK, sst_limits.CIPHER)
MEANING = (
    "Each MiB/s (the bytes on the link over the donor's stream, mean over rounds) is set "
    "against the lowest limit of its variant — the disk's sequential read and write on the "
    "data directories' filesystem, the link donor → joiner, and for the encrypted stream "
    "its cipher on the cores it can use — and the binding resource is named when the result "
    f"is within {100 - sst_limits.AT_LIMIT_PCT:g}% of that limit. Below "
    f"{sst_limits.FAR_BELOW_PCT:g}% of every limit none of them bound the transfer: what held "
    "it back is something none of them measures (for instance the SST tools' own work per "
    "file and per step)."
)


def _figure(value: float | None) -> str:
    return f"{value:,.0f}" if value is not None else "–"


def _limit_text(found: SstLimit, name: str) -> str:
    detail = f" ({found.cipher})" if name == sst_limits.CIPHER and found.cipher else ""
    return f"{name} {_figure(found.limits_mib_per_s[name])}{detail}"


def _limits_text(found: SstLimit) -> str:
    return ", ".join(_limit_text(found, n) for n in ORDER if n in found.limits_mib_per_s)


def limits_table(cells: Sequence[SstCellSummary]) -> Table | None:
    rows = []
    for cell in cells:
        for variant in ("plain", "encrypted"):
            found = cell.limits.get(variant)
            if found is None:
                continue
            rows.append(
                row(
                    cell.label,
                    variant,
                    _figure(found.mib_per_s),
                    _limit_text(found, found.resource),
                    f"{found.pct_of_limit:.0f}%",
                    found.reading,
                    _limits_text(found),
                )
            )
    if not rows:
        return None
    return Table(
        ["SST", "variant", "MiB/s", "lowest limit, MiB/s", "% of it", "what bound it",
         "every limit, MiB/s"],
        rows,
        caption="Each result against this machine's limits",
        notes=[MEANING],
    )  # fmt: skip


def _part(limits: Record, name: str) -> dict[str, Any]:
    part = limits.get(name)
    return part if isinstance(part, dict) else {}


def _not_measured(part: dict[str, Any]) -> str:
    return f"not measured ({part['error']})" if part.get("error") else "not measured"


def _disk_item(limits: Record) -> str:
    disk = _part(limits, "disk")
    if not sst_limits.ok(disk) or "read_mib_per_s" not in disk:
        return f"Disk: {_not_measured(disk)}."
    how = "direct I/O" if disk.get("direct") else "buffered I/O (the filesystem refuses O_DIRECT)"
    return (
        f"Disk: sequential read **{_figure(disk['read_mib_per_s'])} MiB/s**, write "
        f"**{_figure(disk['write_mib_per_s'])} MiB/s** ({disk.get('fio_version') or 'fio'}, "
        f"{disk.get('block', '?')}B blocks, {how}, a {disk.get('file_mib', '?')} MiB file in "
        f"{disk.get('where', 'the sandbox')}, {disk.get('seconds', '?')} s each way; the "
        "file is deleted after)."
    )


def _link_item(limits: Record) -> str:
    link = _part(limits, "link")
    if not sst_limits.ok(link) or "mib_per_s" not in link:
        return f"Link: {_not_measured(link)}."
    rate = link.get("rate_mbit")
    shaped = f"its tbf rate limit of {rate:g} Mbit/s" if rate else "no rate limit"
    retransmits = link.get("retransmits")
    return (
        f"Link: **{_figure(link['mib_per_s'])} MiB/s** received "
        f"({link.get('iperf3_version') or 'iperf3'}, {link.get('streams', 1)} TCP stream "
        f"{link.get('direction', 'donor → joiner')} for {link.get('seconds', 0):.0f} s over "
        f"the SST's veth pair, with {shaped}"
        + (f"; {retransmits} retransmits" if retransmits is not None else "")
        + ")."
    )


def _cipher_item(limits: Record) -> str:
    part = _part(limits, "cipher")
    entries = [e for e in part.get("ciphers", []) if e.get("block_bytes")]
    errors = part.get("errors") or {}
    if not entries and not errors:
        return "Cipher: not measured."
    speeds = "; ".join(
        f"{e['cipher']}{'' if e.get('accel', True) else ' without AES-NI'} "
        f"{_figure(e['mb_per_s_mean'] * sst_limits.MB / sst_limits.MIB)} MiB/s"
        for e in entries
    )
    failed = "; ".join(f"{name} not measured ({why})" for name, why in errors.items())
    return (
        f"Cipher, one core, {sst_limits.TLS_RECORD_BYTES // 1024} KiB records (`openssl speed "
        f"-evp`): {'; '.join(p for p in (speeds, failed) if p)}. A stream is encrypted by one "
        "process on the donor and decrypted by one on the joiner, both on this machine, so its "
        "limit is cores ÷ (1/encrypt + 1/decrypt) with cores = min(2 × streams, "
        f"{limits.get('cores', '?')}): mariabackup sends one socat stream whatever its "
        "--parallel, rsync one stunnel stream per parallel rsync (backup threads). GCM and "
        "ChaCha20-Poly1305 decrypt at their encryption speed. TLS 1.3 stands for the suite its "
        f"proof negotiated (before the proof, {sst_limits.DEFAULT_TLS13_SUITE}); AES128-GCM, "
        "AES256-GCM and CHACHA20 for aes-128-gcm, aes-256-gcm and chacha20-poly1305. openssl "
        "speed reuses one context on one buffer: a ceiling no real stream quite reaches."
    )


def limit_items(limits: Record) -> list[str]:
    return [_disk_item(limits), _link_item(limits), _cipher_item(limits)]


def benchmark_sentence(cells: Sequence[SstCellSummary]) -> str | None:
    """The issue's benchmark: the best encrypted pipeline within 10% of its limit, or the
    resource it stayed below and why."""
    measured = [(c, c.limits["encrypted"]) for c in cells if "encrypted" in c.limits]
    if not measured:
        return None
    cell, best = max(measured, key=lambda pair: pair[1].pct_of_limit)
    head = (
        f"The best encrypted pipeline, {cell.label}, moved {_figure(best.mib_per_s)} MiB/s: "
        f"{best.pct_of_limit:.0f}% of its lowest limit, the {best.resource} "
        f"({_figure(best.limit_mib_per_s)} MiB/s)"
    )
    margin = 100 - sst_limits.AT_LIMIT_PCT
    if best.binding:
        return f"{head} — within {margin:g}% of it: the {best.binding} bound it."
    if best.pct_of_limit >= sst_limits.FAR_BELOW_PCT:
        return (
            f"{head} — not within {margin:g}% of it: the {best.resource} "
            "was the nearest, but something none of the limits measures held the stream below it."
        )
    return (
        f"{head} — far below every limit, so none of them bound it: what held the stream back "
        "is none of the disk, the link and the cipher but something this version does not "
        "measure (the candidates: mariadb-backup's or rsync's own work per file, the SST "
        "scripts' steps inside the stream's window)."
    )


def section(part: StateTransferSummary) -> Section | None:
    if part.limits is None:
        return None
    blocks: list[Block] = []
    sentence = benchmark_sentence(part.cells)
    if sentence:
        blocks.append(Paragraph(sentence))
    table = limits_table(part.cells)
    if table is not None:
        blocks.append(table)
    blocks += [
        Paragraph(
            "The limits, measured once per results directory before the nodes started, with "
            "nothing else of the run busy (a resumed run keeps them):"
        ),
        Bullets(limit_items(part.limits)),
    ]
    return Section("State transfer: against this machine's limits", blocks, level=3)
