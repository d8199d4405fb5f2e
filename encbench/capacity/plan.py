"""What to measure: `openssl speed` jobs and the default, quick and fingerprint plans."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from encbench.capacity.parse import ASYMMETRIC, CIPHERS, Direction


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
# 256-bit.  InnoDB decrypts a page on every read from disk and encrypts it on every write, so
# both directions are measured: for CBC they differ several-fold (decryption parallelises
# across blocks, encryption chains them), for CTR they run the same keystream.
SERVER_CIPHERS: dict[str, str] = {
    "AES_CTR": "aes-256-ctr",
    "AES_CBC": "aes-256-cbc",
}
PAGE_BYTES = 16384
DIRECTIONS: tuple[Direction, ...] = ("decrypt", "encrypt")


FINGERPRINT_REPEATS = 3


def fingerprint_plan(*server_algorithms: str, repeats: int = FINGERPRINT_REPEATS) -> Plan:
    """What every results directory measures (about 6 s per algorithm at the default three
    repeats, a profile's `cipher_speed_repeats`): the server's own cipher(s) at InnoDB's page
    size in both directions, the figures the at-rest report's cipher floor needs."""
    jobs = tuple(
        SpeedJob(SERVER_CIPHERS[algorithm], (PAGE_BYTES,), direction=d)
        for algorithm in server_algorithms
        for d in DIRECTIONS
    )
    return Plan(jobs, repeats=repeats, seconds=1, quick=True)
