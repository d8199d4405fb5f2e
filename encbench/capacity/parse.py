"""What `openssl speed`, `openssl version`, /proc/cpuinfo, /proc/stat, `ldd` and `dpkg -S`
print, as dataclasses: pure parsers, unit-tested on captured outputs in tests/golden/openssl/.
Also the constants the rest of the package shares (binaries, ciphers, OPENSSL_ia32cap masks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

OPENSSL = "/usr/bin/openssl"
MARIADBD = "/usr/sbin/mariadbd"
SYSBENCH = "/usr/bin/sysbench"

CIPHERS = (
    "aes-128-gcm",
    "aes-256-gcm",
    "aes-128-ctr",
    "aes-256-ctr",
    "aes-256-cbc",
    "chacha20-poly1305",
)
# openssl speed's own block-size list; the plans below choose from it.
BLOCK_SIZES = (16, 64, 256, 1024, 8192, 16384)
ASYMMETRIC = ("rsa1024", "rsa2048", "rsa4096", "ecdsap256")

SEED_STUDY_IA32CAP = "~0x200000200000000"
NO_AESNI_IA32CAP = "~0x200000200000000:~0"
FULL_IA32CAP = "~0:~0"

Direction = Literal["encrypt", "decrypt"]
_MB = 1_000_000


# --------------------------------------------------------------------------------------------
# Parsed outputs (one openssl run each)


@dataclass(frozen=True)
class EvpSpeed:
    """One `openssl speed -mr -evp CIPHER` run.  `mb_per_s` maps block bytes to MB/s (10^6
    bytes per second) summed over all `processes` (more than one with `-multi`)."""

    cipher: str
    mb_per_s: dict[int, float]
    processes: int


@dataclass(frozen=True)
class AsymSpeed:
    """One algorithm from an `openssl speed -mr rsaN/ecdsaX` run; rates summed over
    `processes`."""

    family: str
    bits: int
    sign_per_s: float
    verify_per_s: float
    processes: int

    @property
    def algorithm(self) -> str:
        # openssl's -mr records give bits, not the curve; we only ask for NIST P-curves.
        return f"ecdsap{self.bits}" if self.family == "ecdsa" else f"{self.family}{self.bits}"


@dataclass(frozen=True)
class OpensslVersion:
    text: str
    version: str | None
    library_version: str | None


@dataclass(frozen=True)
class CpuFlags:
    model: str
    aes: bool
    vaes: bool
    pclmulqdq: bool
    vpclmulqdq: bool
    sha_ni: bool
    avx2: bool
    avx512: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "aes": self.aes,
            "vaes": self.vaes,
            "pclmulqdq": self.pclmulqdq,
            "vpclmulqdq": self.vpclmulqdq,
            "sha_ni": self.sha_ni,
            "avx2": self.avx2,
            "avx512": bool(self.avx512),
            "avx512_flags": list(self.avx512),
        }


@dataclass(frozen=True)
class LddEntry:
    soname: str
    path: str | None


_MULTI_ECHO = re.compile(r"^Got: (.*) from \d+$")


def _mr_lines(text: str) -> Iterable[tuple[bool, str]]:
    """(from_child, line) for each `-mr` record.  With `-multi` the parent echoes every child's
    records as "Got: <record> from <n>" and then prints the sums as plain records."""
    for raw in text.splitlines():
        line = raw.strip()
        child = _MULTI_ECHO.match(line)
        if child:
            yield True, child[1]
        elif line.startswith("+"):
            yield False, line


def parse_evp_speed(text: str) -> EvpSpeed:
    """Parse `openssl speed -mr [-multi N] -evp CIPHER`.

    `+H:` lists the block sizes, `+F:<index>:<cipher>:<v>...` one value per size.  In -mr mode
    the values are bytes per second (the human table's "1000s of bytes" is a display unit only):
    checked against the `+R:<count>` lines in the golden tests.  With -multi only the children
    print `+H`, so it is taken from their echoed lines.
    """
    sizes: list[int] | None = None
    totals: list[tuple[str, list[float]]] = []
    children = 0
    for from_child, line in _mr_lines(text):
        if line.startswith("+H:"):
            sizes = [int(v) for v in line[3:].split(":") if v]
        elif line.startswith("+F:"):
            fields = line.split(":")
            if len(fields) < 4:
                raise ValueError(f"malformed openssl speed record: {line!r}")
            if from_child:
                children += 1
            else:
                totals.append((fields[2], [float(v) for v in fields[3:]]))
    if not totals:
        raise ValueError("no '+F:' record in openssl speed output")
    if len(totals) > 1:
        raise ValueError(f"expected one cipher, got {[name for name, _ in totals]}")
    if sizes is None:
        raise ValueError("no '+H:' block-size record in openssl speed output")
    name, values = totals[0]
    if len(values) != len(sizes):
        raise ValueError(f"{len(values)} values for {len(sizes)} block sizes in {name}")
    return EvpSpeed(
        cipher=name,
        mb_per_s={size: value / _MB for size, value in zip(sizes, values, strict=True)},
        processes=max(children, 1),
    )


_ASYM_RECORD = re.compile(r"^\+F([234]):\d+:(\d+):([0-9.]+):([0-9.]+)$")
_ASYM_FAMILY = {"2": "rsa", "3": "dsa", "4": "ecdsa"}


def parse_asym_speed(text: str) -> list[AsymSpeed]:
    """Parse `openssl speed -mr [-multi N] rsaN ... ecdsapN ...`.

    `+F2:` is RSA, `+F3:` DSA, `+F4:` ECDSA, each `:<index>:<bits>:<sign/s>:<verify/s>`; the
    figures are already per second.  Other records (ECDH, EdDSA, …) are ignored.
    """
    totals: list[tuple[str, int, float, float]] = []
    children: dict[tuple[str, int], int] = {}
    for from_child, line in _mr_lines(text):
        match = _ASYM_RECORD.match(line)
        if not match:
            continue
        family, bits = _ASYM_FAMILY[match[1]], int(match[2])
        if from_child:
            children[(family, bits)] = children.get((family, bits), 0) + 1
        else:
            totals.append((family, bits, float(match[3]), float(match[4])))
    if not totals:
        raise ValueError("no '+F2:'/'+F3:'/'+F4:' record in openssl speed output")
    return [
        AsymSpeed(family, bits, sign, verify, max(children.get((family, bits), 0), 1))
        for family, bits, sign, verify in totals
    ]


def parse_openssl_version(text: str) -> OpensslVersion:
    """`OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)`; the library part
    matters when the binary and libcrypto come from different builds."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    version = re.match(r"^\S+\s+(\S+)", line)
    library = re.search(r"\(Library:\s*\S+\s+(\S+)", line)
    return OpensslVersion(
        text=line,
        version=version[1] if version else None,
        library_version=library[1] if library else (version[1] if version else None),
    )


def parse_cpu_flags(cpuinfo: str) -> CpuFlags:
    """The crypto-relevant flags of the first processor in /proc/cpuinfo (all cores of one
    machine report the same)."""
    flags_line = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    flags = set(flags_line[1].split()) if flags_line else set()
    return CpuFlags(
        model=model[1].strip() if model else "",
        aes="aes" in flags,
        vaes="vaes" in flags,
        pclmulqdq="pclmulqdq" in flags,
        vpclmulqdq="vpclmulqdq" in flags,
        sha_ni="sha_ni" in flags,
        avx2="avx2" in flags,
        avx512=tuple(sorted(f for f in flags if f.startswith("avx512"))),
    )


_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(.*?)\s*(?:\(0x[0-9a-fA-F]+\))?\s*$")
_TLS_LIB = re.compile(r"^lib(ssl|crypto)\.so")


def parse_ldd(text: str, *, tls_only: bool = True) -> list[LddEntry]:
    """`ldd` lines `libssl.so.3 => /lib/.../libssl.so.3 (0x...)`.  ldd lists transitive
    dependencies too: sysbench reaches libssl through libmariadb, which is still the library
    its TLS uses.  `tls_only` keeps libssl/libcrypto (not e.g. libk5crypto)."""
    entries = []
    for line in text.splitlines():
        match = _LDD_LINE.match(line)
        if not match:
            continue
        soname, target = match[1], match[2]
        if tls_only and not _TLS_LIB.match(soname):
            continue
        entries.append(LddEntry(soname, None if target in ("", "not found") else target))
    return entries


def parse_dpkg_search(text: str) -> list[str]:
    """`dpkg -S PATH` → owning packages (`libssl3:amd64: /usr/lib/...`, or `a, b: path`)."""
    packages: list[str] = []
    for line in text.splitlines():
        if line.startswith(("diversion ", "dpkg-query:", "dpkg:")) or ": " not in line:
            continue
        packages.extend(p.strip() for p in line.split(": ", 1)[0].split(","))
    return [p for p in packages if p]


@dataclass(frozen=True)
class CpuTimes:
    """System-wide CPU seconds from /proc/stat plus our own (with waited-for children)."""

    busy_s: float
    steal_s: float
    ours_s: float


CONTENDED_SHARE = 0.05


@dataclass(frozen=True)
class Contention:
    """Shares of all CPU time during a measurement taken by processes not ours, and stolen by
    the hypervisor.  openssl speed measures wall time (-elapsed), so both lower its figures;
    on a quiet machine both are near 0."""

    other_cpu_share: float
    steal_share: float

    @classmethod
    def between(cls, start: CpuTimes, end: CpuTimes, cpu_s_available: float) -> Contention:
        if cpu_s_available <= 0:
            return cls(0.0, 0.0)
        other = (end.busy_s - start.busy_s) - (end.ours_s - start.ours_s)
        steal = end.steal_s - start.steal_s
        return cls(
            round(max(other, 0.0) / cpu_s_available, 3),
            round(max(steal, 0.0) / cpu_s_available, 3),
        )
