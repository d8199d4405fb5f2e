"""Reading the JSON form of `CryptoCapacity`: `cipher_mb_per_s` and `render_markdown`, so that
stored results can be used without re-measuring."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from encbench.capacity.parse import CONTENDED_SHARE, Direction
from encbench.capacity.plan import HEADLINE_BLOCKS


def cipher_mb_per_s(
    cap_json: Mapping[str, Any],
    cipher: str,
    block_bytes: int,
    accel: bool = True,
    cores: int = 1,
    direction: Direction = "encrypt",
) -> float | None:
    """Mean MB/s measured for exactly this cipher, block size, acceleration and core count;
    None if not measured.

    Asked for decryption where only encryption was measured, GCM, CTR and ChaCha20-Poly1305
    answer with the encryption figure (both directions run the same keystream and MAC work);
    CBC does not, since its decryption parallelises and its encryption cannot."""
    wanted = cipher.lower()

    def find(want_direction: str) -> float | None:
        for entry in cap_json.get("ciphers", []):
            if (
                entry.get("cipher") == wanted
                and entry.get("block_bytes") == block_bytes
                and bool(entry.get("accel")) == accel
                and entry.get("cores") == cores
                and entry.get("direction", "encrypt") == want_direction
            ):
                value = entry.get("mb_per_s_mean")
                return float(value) if value is not None else None
        return None

    found = find(direction)
    if found is None and direction == "decrypt" and "cbc" not in wanted:
        found = find("encrypt")
    return found


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


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _cipher_entry(
    cap: Mapping[str, Any], cipher: str, block: int, accel: bool, cores: int, direction: str
) -> dict[str, Any] | None:
    for e in cap.get("ciphers", []):
        if (e.get("cipher"), e.get("block_bytes"), bool(e.get("accel")), e.get("cores")) == (
            cipher,
            block,
            accel,
            cores,
        ) and e.get("direction", "encrypt") == direction:
            return dict(e)
    return None


def _cell(entry: Mapping[str, Any] | None, key: str) -> str:
    if entry is None:
        return "—"
    return _mean_sd(entry.get(f"{key}_mean"), entry.get(f"{key}_stdev"))


def render_markdown(cap_json: Mapping[str, Any]) -> str:
    """Compact Markdown tables of a `CryptoCapacity.to_json()` dict."""
    ciphers: list[dict[str, Any]] = list(cap_json.get("ciphers", []))
    asym: list[dict[str, Any]] = list(cap_json.get("asymmetric", []))
    single = [c for c in ciphers if c.get("cores") == 1]
    # (cipher, direction) in first-seen order, which to_json keeps in CIPHERS order.
    rows = list(dict.fromkeys((c["cipher"], c.get("direction", "encrypt")) for c in single))
    out: list[str] = []

    def label(cipher: str, direction: str) -> str:
        return cipher if direction == "encrypt" else f"{cipher} ({direction})"

    if rows:
        out += ["### Ciphers, one core: MB/s with and without AES-NI (mean ± stdev)", ""]
        body = []
        for cipher, direction in rows:
            row = [label(cipher, direction)]
            for block in (16384, 16):
                on = _cipher_entry(cap_json, cipher, block, True, 1, direction)
                off = _cipher_entry(cap_json, cipher, block, False, 1, direction)
                row += [
                    _cell(on, "mb_per_s"),
                    _cell(off, "mb_per_s"),
                    _ratio(
                        on["mb_per_s_mean"] if on else None,
                        off["mb_per_s_mean"] if off else None,
                    ),
                ]
            body.append(row)
        header = ["cipher", "16 KiB", "16 KiB no AES-NI", "speed-up"]
        header += ["16 B", "16 B no AES-NI", "speed-up"]
        out += [*_table(header, body), ""]

        blocks = sorted({c["block_bytes"] for c in single if c.get("accel")})
        if set(blocks) - set(HEADLINE_BLOCKS):
            out += ["### Ciphers by block size, one core, AES-NI on (MB/s)", ""]
            body = [
                [label(cipher, direction)]
                + [
                    _num(e["mb_per_s_mean"]) if e else "—"
                    for e in (
                        _cipher_entry(cap_json, cipher, b, True, 1, direction) for b in blocks
                    )
                ]
                for cipher, direction in rows
            ]
            out += [*_table(["cipher", *(_size(b) for b in blocks)], body), ""]

    single_asym = [a for a in asym if a.get("cores") == 1 and a.get("accel", True)]
    if single_asym:
        out += ["### Public-key operations, one core (per second, mean ± stdev)", ""]
        body = [
            [a["algorithm"], _cell(a, "sign_per_s"), _cell(a, "verify_per_s")] for a in single_asym
        ]
        out += [*_table(["algorithm", "sign/s", "verify/s"], body), ""]

    multi_rows: list[list[str]] = []
    cores_seen = sorted({int(e["cores"]) for e in [*ciphers, *asym] if int(e.get("cores", 1)) > 1})
    for e in ciphers:
        if e.get("cores", 1) > 1:
            one = _cipher_entry(
                cap_json,
                e["cipher"],
                e["block_bytes"],
                bool(e["accel"]),
                1,
                e.get("direction", "encrypt"),
            )
            one_v = one["mb_per_s_mean"] if one else None
            multi_rows.append(
                [
                    f"{label(e['cipher'], e.get('direction', 'encrypt'))} "
                    f"{_size(e['block_bytes'])} MB/s",
                    str(e["cores"]),
                    _num(one_v),
                    _num(e["mb_per_s_mean"]),
                    _ratio(e["mb_per_s_mean"], one_v),
                ]
            )
    for a in asym:
        if a.get("cores", 1) > 1:
            one_a = next(
                (x for x in asym if x["algorithm"] == a["algorithm"] and x.get("cores") == 1),
                None,
            )
            for key, unit in (("sign_per_s", "sign/s"), ("verify_per_s", "verify/s")):
                base = one_a[f"{key}_mean"] if one_a else None
                multi_rows.append(
                    [
                        f"{a['algorithm']} {unit}",
                        str(a["cores"]),
                        _num(base),
                        _num(a[f"{key}_mean"]),
                        _ratio(a[f"{key}_mean"], base),
                    ]
                )
    if multi_rows:
        n = "/".join(str(c) for c in cores_seen)
        out += [f"### All cores ({n}): totals, AES-NI on", ""]
        out += [*_table(["measure", "cores", "1 core", "all cores", "scaling"], multi_rows), ""]

    out += _render_environment(cap_json)
    return "\n".join(out).rstrip() + "\n"


def _render_environment(cap_json: Mapping[str, Any]) -> list[str]:
    out = ["### CPU and libraries", ""]
    flags = cap_json.get("cpu_flags") or {}
    if flags:
        names = ("aes", "pclmulqdq", "vaes", "vpclmulqdq", "sha_ni", "avx2", "avx512")
        shown = ", ".join(f"{n} {'yes' if flags.get(n) else 'no'}" for n in names if n in flags)
        model = flags.get("model") or "unknown CPU"
        out.append(f"- CPU: {model} ({cap_json.get('nproc', '?')} cores); {shown}")
    other, steal = cap_json.get("other_cpu_share"), cap_json.get("steal_share")
    if (other or 0) >= CONTENDED_SHARE or (steal or 0) >= CONTENDED_SHARE:
        out.append(
            f"- **contended**: other processes used {100 * (other or 0):.0f}% and the hypervisor "
            f"stole {100 * (steal or 0):.0f}% of the CPU time during the measurement; "
            "figures are low and spread wide"
        )
    ossl = cap_json.get("openssl") or {}
    if ossl:
        out.append(
            f"- openssl: {ossl.get('version_text') or ossl.get('version') or 'unknown'}; "
            f"AES-NI off = OPENSSL_ia32cap={ossl.get('accel_off_ia32cap', '?')}"
        )
    for name, info in (cap_json.get("linked") or {}).items():
        if name == "openssl":
            continue
        if not info.get("found"):
            out.append(f"- {name}: not installed")
            continue
        libs = info.get("libs") or []
        if not libs:
            out.append(f"- {name}: no libssl/libcrypto linked ({info.get('error') or 'ldd'})")
            continue
        parts = []
        for lib in libs:
            where = lib.get("real_path") or lib.get("path") or "not found"
            pkg = lib.get("package")
            ver = lib.get("package_version")
            parts.append(f"{where}" + (f" ({pkg} {ver})" if pkg else ""))
        same = info.get("same_libcrypto_as_openssl")
        note = (
            ""
            if same is None
            else ("; same libcrypto as openssl" if same else "; NOT the libcrypto openssl measured")
        )
        out.append(f"- {name}: " + ", ".join(parts) + note)
    out.append("")
    return out
