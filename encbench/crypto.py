"""The machine's crypto capacity: how many MB/s this CPU encrypts and how many RSA/ECDSA
signatures and verifications it does per second, with and without AES-NI, on one core and on
all of them, measured with the real `openssl speed`.

These figures bound what encryption can cost MariaDB: a page read that must be decrypted, a TLS
record, a handshake.  Comparing them with a measured slowdown tells whether the crypto itself or
something around it (extra copies, locks, I/O) is the cost.

Layout: pure parsers (text → dataclasses, unit-tested on captured outputs in
tests/golden/openssl/), a small plan of which `openssl speed` runs to make, the runner, and
`render_markdown` / `cipher_mb_per_s`, which read the JSON form so that stored results can be
used without re-measuring.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from encbench.errors import EncbenchError, ToolError
from encbench.proc import run

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


def parse_proc_stat(text: str, ticks_per_s: float) -> tuple[float, float]:
    """(busy, steal) seconds summed over all CPUs from the `cpu` line of /proc/stat: user
    nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already in
    user, idle and iowait are not busy."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            v = [int(x) for x in fields[1:]] + [0] * 8
            busy = v[0] + v[1] + v[2] + v[5] + v[6]
            return busy / ticks_per_s, v[7] / ticks_per_s
    raise ValueError("no aggregate 'cpu' line in /proc/stat")


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


# --------------------------------------------------------------------------------------------
# Aggregated results


@dataclass(frozen=True)
class Stat:
    mean: float
    stdev: float | None
    n: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stat:
        if not samples:
            raise ValueError("no samples")
        spread = statistics.stdev(samples) if len(samples) > 1 else None
        return cls(statistics.fmean(samples), spread, len(samples))


@dataclass(frozen=True)
class CipherResult:
    """MB/s for one cipher and block size.  For cores > 1 it is the total over all cores."""

    cipher: str
    accel: bool
    cores: int
    direction: Direction
    block_bytes: int
    mb_per_s: Stat

    def to_json(self) -> dict[str, Any]:
        return {
            "cipher": self.cipher,
            "accel": self.accel,
            "cores": self.cores,
            "direction": self.direction,
            "block_bytes": self.block_bytes,
            "mb_per_s_mean": self.mb_per_s.mean,
            "mb_per_s_stdev": self.mb_per_s.stdev,
            "n": self.mb_per_s.n,
        }


@dataclass(frozen=True)
class AsymResult:
    """Signs and verifies per second; for cores > 1 the total over all cores."""

    algorithm: str
    accel: bool
    cores: int
    sign_per_s: Stat
    verify_per_s: Stat

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "accel": self.accel,
            "cores": self.cores,
            "sign_per_s_mean": self.sign_per_s.mean,
            "sign_per_s_stdev": self.sign_per_s.stdev,
            "verify_per_s_mean": self.verify_per_s.mean,
            "verify_per_s_stdev": self.verify_per_s.stdev,
            "n": self.sign_per_s.n,
        }


@dataclass(frozen=True)
class LinkedLib:
    soname: str
    path: str | None
    real_path: str | None
    package: str | None
    package_version: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "soname": self.soname,
            "path": self.path,
            "real_path": self.real_path,
            "package": self.package,
            "package_version": self.package_version,
        }


@dataclass(frozen=True)
class LinkedBinary:
    binary: str
    found: bool
    libs: tuple[LinkedLib, ...] = ()
    error: str | None = None

    def libcrypto(self) -> str | None:
        for lib in self.libs:
            if lib.soname.startswith("libcrypto.so"):
                return lib.real_path or lib.path
        return None

    def to_json(self, openssl_libcrypto: str | None) -> dict[str, Any]:
        mine = self.libcrypto()
        return {
            "binary": self.binary,
            "found": self.found,
            "libs": [lib.to_json() for lib in self.libs],
            # Whether `openssl speed` measured the very libcrypto this binary runs.
            "same_libcrypto_as_openssl": (
                mine == openssl_libcrypto if mine and openssl_libcrypto else None
            ),
            "error": self.error,
        }


@dataclass(frozen=True)
class CryptoCapacity:
    ciphers: tuple[CipherResult, ...]
    asymmetric: tuple[AsymResult, ...]
    cpu_flags: CpuFlags
    openssl: OpensslVersion
    linked: dict[str, LinkedBinary]
    plan: dict[str, Any]
    nproc: int
    elapsed_s: float
    # openssl speed shares the CPUs with whatever else runs and (in a VM) with the host.
    contention: Contention | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-able; units are in the key names (MB = 10^6 bytes), and for entries with
        cores > 1 the figures are totals over all cores."""
        openssl_lib = self.linked["openssl"].libcrypto() if "openssl" in self.linked else None
        return {
            "ciphers": [c.to_json() for c in self.ciphers],
            "asymmetric": [a.to_json() for a in self.asymmetric],
            "cpu_flags": self.cpu_flags.to_json(),
            "openssl": {
                "binary": OPENSSL,
                "version_text": self.openssl.text,
                "version": self.openssl.version,
                "library_version": self.openssl.library_version,
                "accel_on_ia32cap": FULL_IA32CAP,
                "accel_off_ia32cap": NO_AESNI_IA32CAP,
            },
            "linked": {name: b.to_json(openssl_lib) for name, b in self.linked.items()},
            "plan": self.plan,
            "nproc": self.nproc,
            "elapsed_s": self.elapsed_s,
            "other_cpu_share": self.contention.other_cpu_share if self.contention else None,
            "steal_share": self.contention.steal_share if self.contention else None,
        }


# --------------------------------------------------------------------------------------------
# What to measure


@dataclass(frozen=True)
class SpeedJob:
    """One `openssl speed` configuration; a cipher job is run once per block size (-bytes)."""

    algorithm: str
    blocks: tuple[int, ...] = ()
    accel: bool = True
    cores: int = 1
    direction: Direction = "encrypt"

    @property
    def is_cipher(self) -> bool:
        return bool(self.blocks)

    def runs(self) -> list[int | None]:
        return list(self.blocks) if self.is_cipher else [None]

    def seconds_per_run(self, seconds: int) -> int:
        # openssl times sign and verify separately, each for -seconds.
        return seconds if self.is_cipher else 2 * seconds


@dataclass(frozen=True)
class Plan:
    jobs: tuple[SpeedJob, ...]
    repeats: int
    seconds: int
    quick: bool

    @property
    def estimated_s(self) -> int:
        per_round = sum(j.seconds_per_run(self.seconds) * len(j.runs()) for j in self.jobs)
        return per_round * self.repeats

    def to_json(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "repeats": self.repeats,
            "seconds_per_run": self.seconds,
            "estimated_s": self.estimated_s,
        }


HEADLINE_BLOCKS = (16, 16384)


def default_plan(nproc: int) -> Plan:
    """About 100 s of `openssl speed` (limit: 2 minutes on a 2-core machine).

    -seconds is an integer, so each cell costs at least one second per repeat; the full grid
    (6 ciphers × 6 sizes × on/off × 3 repeats) would take over 3 minutes.  So: every cipher at
    16 B (a small TLS record or row) and 16 KiB (an InnoDB page, a full TLS record), with and
    without AES-NI; the middle of the curve only for AES-256-GCM, the cipher TLS 1.3 between
    MariaDB and its clients usually negotiates; CBC decryption separately because, unlike
    GCM/CTR, it is several times faster than CBC encryption; RSA/ECDSA only with acceleration
    (they use no AES-NI); all cores only for AES-256-GCM and RSA-2048.
    """
    jobs: list[SpeedJob] = [SpeedJob(c, HEADLINE_BLOCKS) for c in CIPHERS]
    jobs.append(SpeedJob("aes-256-gcm", (256, 1024)))
    # ChaCha20 uses no AES-NI/PCLMULQDQ, so its "off" run would repeat the "on" one.
    jobs += [
        SpeedJob(c, HEADLINE_BLOCKS, accel=False)
        for c in ("aes-128-gcm", "aes-256-gcm", "aes-256-ctr", "aes-256-cbc")
    ]
    jobs.append(SpeedJob("aes-256-cbc", (16384,), direction="decrypt"))
    jobs += [SpeedJob(a) for a in ASYMMETRIC]
    if nproc > 1:
        jobs += [SpeedJob("aes-256-gcm", (16384,), cores=nproc), SpeedJob("rsa2048", cores=nproc)]
    return Plan(tuple(jobs), repeats=3, seconds=1, quick=False)


def quick_plan(nproc: int) -> Plan:
    """About 8 s: enough to show AES-NI's effect and exercise every code path but -multi."""
    jobs = (
        SpeedJob("aes-128-gcm", (16384,)),
        SpeedJob("aes-128-gcm", (16384,), accel=False),
        SpeedJob("rsa2048"),
    )
    return Plan(jobs, repeats=2, seconds=1, quick=True)


# MariaDB's file_key_management algorithms as openssl names them; our generated keys are
# 256-bit.  InnoDB decrypts a page on every read, so CBC is measured in that direction.
SERVER_CIPHERS: dict[str, tuple[str, Direction]] = {
    "AES_CTR": ("aes-256-ctr", "decrypt"),
    "AES_CBC": ("aes-256-cbc", "decrypt"),
}
PAGE_BYTES = 16384


def fingerprint_plan(server_algorithm: str) -> Plan:
    """What every results directory measures (a few seconds): the server's own cipher at
    InnoDB's page size, the figure the at-rest report's predicted ceiling needs."""
    cipher, direction = SERVER_CIPHERS[server_algorithm]
    jobs = (SpeedJob(cipher, (PAGE_BYTES,), direction=direction),)
    return Plan(jobs, repeats=3, seconds=1, quick=True)


# --------------------------------------------------------------------------------------------
# Running openssl


def _ia32cap_env(accel: bool) -> dict[str, str]:
    """How the "accel off" runs switch AES-NI off, and why with that exact mask.

    OpenSSL picks its code paths from a capability vector built from CPUID, which the environment
    variable OPENSSL_ia32cap overrides; a leading "~" clears the given bits from the real vector.

    * Bit 57 is CPUID.1:ECX[25], AES-NI.  Bit 33 is CPUID.1:ECX[1], PCLMULQDQ (carry-less
      multiply).  Both must go: with AES-NI off but PCLMULQDQ on, GCM's GHASH would still run in
      hardware and "unaccelerated" AES-GCM would be half-accelerated.  Hence 0x200000200000000,
      the mask the seed study used.
    * The ":~0" suffix is ours.  OpenSSL 3.0 (crypto/cpuid.c) zeroes the second capability word,
      CPUID leaf 7 (AVX2, AVX-512, VAES, VPCLMULQDQ, SHA-NI, BMI2, ADX), whenever the variable has
      no ":" part.  The seed mask alone therefore also cuts RSA-2048 signing ~3.3× and
      ChaCha20-Poly1305 ~2.9× on this kind of CPU although neither uses AES-NI (see
      tests/golden/openssl/asym_rsa2048_seed_mask.mr.txt).  ":~0" clears nothing from leaf 7, so
      the off runs lose exactly AES-NI and PCLMULQDQ; the AES figures are the same under both masks
      (AES-NI off also keeps OpenSSL 3.0 off its VAES paths).
    * The accelerated runs set "~0:~0" (clear nothing) rather than leaving the variable unset:
      `encbench.proc.run` can add variables but not remove one inherited from the user, and an
      inherited value would silently slow the "accelerated" figures.  An empty value would be worse
      still: OpenSSL reads it as the vector 0, i.e. every extension off.
    """
    return {"OPENSSL_ia32cap": FULL_IA32CAP if accel else NO_AESNI_IA32CAP}


def speed_argv(job: SpeedJob, block: int | None, seconds: int) -> list[str]:
    argv = [OPENSSL, "speed", "-elapsed", "-mr", "-seconds", str(seconds)]
    if job.cores > 1:
        argv += ["-multi", str(job.cores)]
    if block is None:
        return [*argv, job.algorithm]
    argv += ["-bytes", str(block)]
    if job.direction == "decrypt":
        argv.append("-decrypt")
    return [*argv, "-evp", job.algorithm]


def _run_speed(argv: list[str], *, accel: bool, timeout_s: float) -> str:
    return run(
        argv,
        phase="crypto capacity",
        timeout_s=timeout_s,
        env=_ia32cap_env(accel),
        hint="check that `openssl speed` works on this machine",
    ).stdout


def _parse_or_fail(argv: list[str], text: str, job: SpeedJob, block: int | None) -> list[float]:
    """Figures of one run: [MB/s] for a cipher, [sign/s, verify/s] otherwise."""
    try:
        if block is not None:
            evp = parse_evp_speed(text)
            if evp.cipher.lower() != job.algorithm or block not in evp.mb_per_s:
                raise ValueError(f"got {evp.cipher} at {sorted(evp.mb_per_s)} bytes")
            got, figures = evp.processes, [evp.mb_per_s[block]]
        else:
            asym = [a for a in parse_asym_speed(text) if a.algorithm == job.algorithm]
            if len(asym) != 1:
                raise ValueError(f"no single {job.algorithm} record")
            got, figures = asym[0].processes, [asym[0].sign_per_s, asym[0].verify_per_s]
    except ValueError as exc:
        raise ToolError(
            f"could not read openssl speed output: {exc}",
            argv=argv,
            phase="crypto capacity",
            tail="\n".join(text.splitlines()[-15:]),
        ) from exc
    # A -multi child that died would leave a sum over fewer cores than claimed.
    if got != job.cores:
        raise ToolError(
            f"{got} of {job.cores} openssl processes reported",
            argv=argv,
            phase="crypto capacity",
            tail="\n".join(text.splitlines()[-15:]),
        )
    return figures


def _describe(job: SpeedJob, block: int | None) -> str:
    parts = [job.algorithm]
    if block is not None:
        parts.append(f"{block} B")
        if job.direction == "decrypt":
            parts.append("decrypt")
        parts.append("AES-NI on" if job.accel else "AES-NI off")
    if job.cores > 1:
        parts.append(f"{job.cores} cores")
    return ", ".join(parts)


def measure_speeds(
    plan: Plan, progress: Callable[[str], None] | None = None
) -> tuple[list[CipherResult], list[AsymResult]]:
    """Run the plan; repeats go round-robin over all runs so that a slow drift (another
    process, thermal or hypervisor throttling) spreads over every cell instead of biasing the
    cells that happened to run last."""
    samples: dict[tuple[SpeedJob, int | None], list[list[float]]] = {}
    units = [(job, block) for job in plan.jobs for block in job.runs()]
    for repeat in range(plan.repeats):
        for i, (job, block) in enumerate(units, 1):
            if progress:
                progress(
                    f"openssl speed {_describe(job, block)} "
                    f"(run {i}/{len(units)}, repeat {repeat + 1}/{plan.repeats})"
                )
            argv = speed_argv(job, block, plan.seconds)
            text = _run_speed(
                argv, accel=job.accel, timeout_s=job.seconds_per_run(plan.seconds) * 5 + 30
            )
            samples.setdefault((job, block), []).append(_parse_or_fail(argv, text, job, block))

    ciphers: list[CipherResult] = []
    asym: list[AsymResult] = []
    for (job, block), runs in samples.items():
        if block is not None:
            stat = Stat.of([r[0] for r in runs])
            ciphers.append(
                CipherResult(job.algorithm, job.accel, job.cores, job.direction, block, stat)
            )
        else:
            asym.append(
                AsymResult(
                    job.algorithm,
                    job.accel,
                    job.cores,
                    Stat.of([r[0] for r in runs]),
                    Stat.of([r[1] for r in runs]),
                )
            )
    ciphers.sort(key=_cipher_order)
    asym.sort(key=lambda a: (_index(ASYMMETRIC, a.algorithm), a.cores))
    return ciphers, asym


def _index(seq: Sequence[str], item: str) -> int:
    return seq.index(item) if item in seq else len(seq)


def _cipher_order(c: CipherResult) -> tuple[int, int, str, bool, int]:
    return (c.cores, _index(CIPHERS, c.cipher), c.direction, not c.accel, c.block_bytes)


def read_cpu_flags(path: Path = Path("/proc/cpuinfo")) -> CpuFlags:
    try:
        return parse_cpu_flags(path.read_text(errors="replace"))
    except OSError:
        return parse_cpu_flags("")


def read_openssl_version() -> OpensslVersion:
    return parse_openssl_version(
        run([OPENSSL, "version"], phase="crypto capacity", timeout_s=30).stdout
    )


def _cpu_snapshot() -> CpuTimes | None:
    try:
        busy, steal = parse_proc_stat(Path("/proc/stat").read_text(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None
    t = os.times()
    return CpuTimes(busy, steal, t.user + t.system + t.children_user + t.children_system)


def _quiet(argv: list[str]) -> str | None:
    """stdout of a helper whose absence or failure only costs a detail in the report."""
    try:
        result = run(argv, phase="crypto capacity", timeout_s=30, check=False)
    except EncbenchError:
        return None
    return result.stdout if result.returncode == 0 else None


def package_of(path: str) -> tuple[str | None, str | None]:
    """(package, version) owning `path`, or Nones when dpkg is absent or does not know it.

    With merged /usr, ldd reports /lib/... while dpkg registered /usr/lib/...; the resolved
    path is asked first, then the path as ldd gave it."""
    for candidate in dict.fromkeys([os.path.realpath(path), path]):
        out = _quiet(["dpkg", "-S", candidate])
        packages = parse_dpkg_search(out) if out else []
        if packages:
            version = _quiet(["dpkg-query", "-W", "-f=${Version}", packages[0]])
            return packages[0], (version.strip() or None) if version else None
    return None, None


def linked_tls_libs(binary: str) -> LinkedBinary:
    if not Path(binary).exists():
        return LinkedBinary(binary, found=False)
    out = _quiet(["ldd", binary])
    if out is None:
        return LinkedBinary(binary, found=True, error="ldd failed or is not installed")
    libs = []
    for entry in parse_ldd(out):
        real = os.path.realpath(entry.path) if entry.path else None
        package, version = package_of(entry.path) if entry.path else (None, None)
        libs.append(LinkedLib(entry.soname, entry.path, real, package, version))
    return LinkedBinary(binary, found=True, libs=tuple(libs))


def measure_capacity(
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
    plan: Plan | None = None,
) -> CryptoCapacity:
    """Measure this machine's crypto capacity with `openssl speed` (≈100 s; quick ≈10 s;
    or exactly the given plan)."""
    started = time.monotonic()
    cpu_start = _cpu_snapshot()
    nproc = os.cpu_count() or 1
    if plan is None:
        plan = quick_plan(nproc) if quick else default_plan(nproc)
    if progress:
        progress(f"crypto capacity: about {plan.estimated_s} s of openssl speed")
    cpu = read_cpu_flags()
    version = read_openssl_version()
    linked = {
        name: linked_tls_libs(path)
        for name, path in (("openssl", OPENSSL), ("mariadbd", MARIADBD), ("sysbench", SYSBENCH))
    }
    ciphers, asym = measure_speeds(plan, progress)
    cpu_end = _cpu_snapshot()
    elapsed_s = time.monotonic() - started
    return CryptoCapacity(
        ciphers=tuple(ciphers),
        asymmetric=tuple(asym),
        cpu_flags=cpu,
        openssl=version,
        linked=linked,
        plan=plan.to_json(),
        nproc=nproc,
        elapsed_s=round(elapsed_s, 2),
        contention=(
            Contention.between(cpu_start, cpu_end, elapsed_s * nproc)
            if cpu_start and cpu_end
            else None
        ),
    )


# --------------------------------------------------------------------------------------------
# Reading the JSON form


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
