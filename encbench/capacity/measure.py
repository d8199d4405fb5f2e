"""Running openssl (and ldd, dpkg, /proc) to measure the machine's crypto capacity."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from encbench.capacity.parse import (
    ASYMMETRIC,
    CIPHERS,
    FULL_IA32CAP,
    MARIADBD,
    NO_AESNI_IA32CAP,
    OPENSSL,
    SYSBENCH,
    Contention,
    CpuFlags,
    CpuTimes,
    OpensslVersion,
    parse_asym_speed,
    parse_cpu_flags,
    parse_dpkg_search,
    parse_evp_speed,
    parse_ldd,
    parse_openssl_version,
)
from encbench.capacity.plan import Plan, SpeedJob, default_plan, quick_plan
from encbench.capacity.results import (
    AsymResult,
    CipherResult,
    CryptoCapacity,
    LinkedBinary,
    LinkedLib,
    Stat,
)
from encbench.errors import EncbenchError, ToolError
from encbench.proc import machine_cpu_s, run


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
        busy, steal = machine_cpu_s()
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
