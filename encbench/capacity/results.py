"""Aggregated results: mean ± stdev per cipher/algorithm, the TLS libraries each binary links,
and `CryptoCapacity`, the whole measurement with its JSON form."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from encbench.capacity.parse import (
    FULL_IA32CAP,
    NO_AESNI_IA32CAP,
    OPENSSL,
    Contention,
    CpuFlags,
    Direction,
    OpensslVersion,
)


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
