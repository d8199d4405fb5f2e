"""The crypto capacity tables: what this CPU encrypts per second (`openssl speed`), built
once as the document model (report/tables.py). `encbench crypto` prints them as Markdown
(`render_markdown`); the HTML report shows them in its crypto section, with the bars plot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from encbench import capacity
from encbench.capacity import CONTENDED_SHARE, HEADLINE_BLOCKS, cipher_entry
from encbench.report import markdown, plots
from encbench.report.models import Record
from encbench.report.tables import Block, Bullets, Paragraph, Plot, Section, Table, row

INTRO = (
    "What this CPU encrypts per second (`openssl speed`): an upper bound for what the cipher "
    "itself can cost; a measured slowdown far above it comes from something around the "
    "crypto (copies, locks, I/O)."
)


def section(cap: Record, algorithm: str | None) -> Section:
    blocks: list[Block] = [Paragraph(INTRO)]
    if algorithm in capacity.SERVER_CIPHERS:
        cipher = capacity.SERVER_CIPHERS[algorithm]
        for direction in capacity.DIRECTIONS:
            mb = capacity.cipher_mb_per_s(cap, cipher, capacity.PAGE_BYTES, direction=direction)
            if mb:
                us = capacity.PAGE_BYTES / (mb * 1e6) * 1e6
                blocks.append(
                    Paragraph(
                        f"The server's {algorithm} is {cipher} ({direction}): {mb:,.0f} MB/s "
                        f"on one core, i.e. {us:.1f} µs of CPU per 16 KiB page."
                    )
                )
    blocks.append(
        Plot(lambda: plots.crypto_svg(cap), "One core; hatched: AES-NI off. MB = 10⁶ bytes.")
    )
    blocks += tables(cap)
    return Section("Crypto capacity of this machine", blocks, html_only=True)


def render_markdown(cap: Record) -> str:
    """What `encbench crypto` prints: the tables of a `CryptoCapacity.to_json()` dict."""
    return markdown.render_blocks(tables(cap))


def _label(cipher: str, direction: str) -> str:
    return cipher if direction == "encrypt" else f"{cipher} ({direction})"


def tables(cap: Record) -> list[Section]:
    """One subsection per table, and the CPU and libraries as bullets."""
    ciphers = list(cap.get("ciphers", []))
    asym = list(cap.get("asymmetric", []))
    single = [c for c in ciphers if c.get("cores") == 1]
    # (cipher, direction) in first-seen order, which to_json keeps in CIPHERS order.
    pairs = list(dict.fromkeys((c["cipher"], c.get("direction", "encrypt")) for c in single))
    out = []
    if pairs:
        body = []
        for cipher, direction in pairs:
            cells = [_label(cipher, direction)]
            for block in (16384, 16):
                on = cipher_entry(cap, cipher, block, True, 1, direction)
                off = cipher_entry(cap, cipher, block, False, 1, direction)
                cells += [
                    _cell(on, "mb_per_s"),
                    _cell(off, "mb_per_s"),
                    _ratio(
                        on["mb_per_s_mean"] if on else None, off["mb_per_s_mean"] if off else None
                    ),
                ]
            body.append(row(*cells))
        header = ["cipher", "16 KiB", "16 KiB no AES-NI", "speed-up"]
        header += ["16 B", "16 B no AES-NI", "speed-up"]
        title = "Ciphers, one core: MB/s with and without AES-NI (mean ± stdev)"
        out.append(Section(title, [Table(header, body)], level=3))
        blocks = sorted({c["block_bytes"] for c in single if c.get("accel")})
        if set(blocks) - set(HEADLINE_BLOCKS):
            body = []
            for cipher, direction in pairs:
                found = (cipher_entry(cap, cipher, b, True, 1, direction) for b in blocks)
                values = [_num(e["mb_per_s_mean"]) if e else "—" for e in found]
                body.append(row(_label(cipher, direction), *values))
            header = ["cipher", *(_size(b) for b in blocks)]
            title = "Ciphers by block size, one core, AES-NI on (MB/s)"
            out.append(Section(title, [Table(header, body)], level=3))
    single_asym = [a for a in asym if a.get("cores") == 1 and a.get("accel", True)]
    if single_asym:
        body = [
            row(a["algorithm"], _cell(a, "sign_per_s"), _cell(a, "verify_per_s"))
            for a in single_asym
        ]
        title = "Public-key operations, one core (per second, mean ± stdev)"
        out.append(Section(title, [Table(["algorithm", "sign/s", "verify/s"], body)], level=3))
    multi = _all_cores(cap, ciphers, asym)
    if multi is not None:
        out.append(multi)
    out.append(Section("CPU and libraries", [Bullets(_environment(cap))], level=3))
    return out


def _all_cores(cap: Record, ciphers: list[Record], asym: list[Record]) -> Section | None:
    rows = []
    cores_seen = sorted({int(e["cores"]) for e in [*ciphers, *asym] if int(e.get("cores", 1)) > 1})
    for e in ciphers:
        if e.get("cores", 1) > 1:
            direction = e.get("direction", "encrypt")
            one = cipher_entry(cap, e["cipher"], e["block_bytes"], bool(e["accel"]), 1, direction)
            one_v = one["mb_per_s_mean"] if one else None
            rows.append(
                row(
                    f"{_label(e['cipher'], direction)} {_size(e['block_bytes'])} MB/s",
                    str(e["cores"]),
                    _num(one_v),
                    _num(e["mb_per_s_mean"]),
                    _ratio(e["mb_per_s_mean"], one_v),
                )
            )
    for a in asym:
        if a.get("cores", 1) > 1:
            one_a = next(
                (x for x in asym if x["algorithm"] == a["algorithm"] and x.get("cores") == 1),
                None,
            )
            for key, unit in (("sign_per_s", "sign/s"), ("verify_per_s", "verify/s")):
                base = one_a[f"{key}_mean"] if one_a else None
                rows.append(
                    row(
                        f"{a['algorithm']} {unit}",
                        str(a["cores"]),
                        _num(base),
                        _num(a[f"{key}_mean"]),
                        _ratio(a[f"{key}_mean"], base),
                    )
                )
    if not rows:
        return None
    header = ["measure", "cores", "1 core", "all cores", "scaling"]
    title = f"All cores ({'/'.join(str(c) for c in cores_seen)}): totals, AES-NI on"
    return Section(title, [Table(header, rows)], level=3)


def _environment(cap: Record) -> list[str]:
    """The CPU, its flags, how contended it was, openssl, and the TLS libraries each binary
    links: what the figures above depend on."""
    items = []
    flags = cap.get("cpu_flags") or {}
    if flags:
        names = ("aes", "pclmulqdq", "vaes", "vpclmulqdq", "sha_ni", "avx2", "avx512")
        shown = ", ".join(f"{n} {'yes' if flags.get(n) else 'no'}" for n in names if n in flags)
        model = flags.get("model") or "unknown CPU"
        items.append(f"CPU: {model} ({cap.get('nproc', '?')} cores); {shown}")
    other, steal = cap.get("other_cpu_share"), cap.get("steal_share")
    if (other or 0) >= CONTENDED_SHARE or (steal or 0) >= CONTENDED_SHARE:
        items.append(
            f"**contended**: other processes used {100 * (other or 0):.0f}% and the hypervisor "
            f"stole {100 * (steal or 0):.0f}% of the CPU time during the measurement; "
            "figures are low and spread wide"
        )
    ossl = cap.get("openssl") or {}
    if ossl:
        items.append(
            f"openssl: {ossl.get('version_text') or ossl.get('version') or 'unknown'}; "
            f"AES-NI off = OPENSSL_ia32cap={ossl.get('accel_off_ia32cap', '?')}"
        )
    for name, info in (cap.get("linked") or {}).items():
        if name != "openssl":
            items.append(f"{name}: {_linked(info)}")
    return items


def _linked(info: Mapping[str, Any]) -> str:
    if not info.get("found"):
        return "not installed"
    libs = info.get("libs") or []
    if not libs:
        return f"no libssl/libcrypto linked ({info.get('error') or 'ldd'})"
    parts = []
    for lib in libs:
        where = lib.get("real_path") or lib.get("path") or "not found"
        pkg = lib.get("package")
        parts.append(where + (f" ({pkg} {lib.get('package_version')})" if pkg else ""))
    same = info.get("same_libcrypto_as_openssl")
    if same is None:
        return ", ".join(parts)
    return ", ".join(parts) + (
        "; same libcrypto as openssl" if same else "; NOT the libcrypto openssl measured"
    )


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _mean_sd(mean: float | None, sd: float | None) -> str:
    if mean is None:
        return "—"
    return f"{_num(mean)} ± {_num(sd)}" if sd is not None else _num(mean)


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a is not None and b else "—"


def _size(block: int) -> str:
    return f"{block // 1024} KiB" if block >= 1024 and block % 1024 == 0 else f"{block} B"


def _cell(entry: Mapping[str, Any] | None, key: str) -> str:
    """`key`'s mean ± stdev in an entry; a dash when the entry was not measured."""
    if entry is None:
        return "—"
    return _mean_sd(entry.get(f"{key}_mean"), entry.get(f"{key}_stdev"))
