"""The limits beside every state-transfer result (issue #10): which of this machine's
resources a transfer could at best run at, and which one bound it.  Pure: it reads the
figures measure_limits.py recorded in state-transfer.json ("limits") and a cell's measured
MiB/s; the report and the tests use it.

The limits of one transfer, each in MiB/s (2^20 bytes per second):

- **disk read** and **disk write**: fio's sequential speeds on the data directories'
  filesystem (capacity/disk.py).  The donor reads its files and the joiner writes them.
- **link**: iperf3's one TCP stream from the donor's namespace to the joiner's over the
  SST's own veth, with its rate limit if the profile sets one (capacity/link.py).
- **cipher** (the encrypted side only): `openssl speed -evp` of the cipher the stream
  negotiated, at 16 KiB (a full TLS record), one core, both directions (GCM and
  ChaCha20-Poly1305 decrypt at their encryption speed: capacity.cipher_mb_per_s), with
  AES-NI or, for a cell with `aesni = "off"`, without (the same mask), times the cores the
  stream can use; none under the seed's mask (`aesni = "seed-mask"`), which capacity does
  not measure.  Which cipher stands for which SST choice: the TLS 1.2 suites
  `AES128-GCM` → aes-128-gcm, `AES256-GCM` → aes-256-gcm, `CHACHA20` →
  chacha20-poly1305; TLS 1.3 (socat's default, and rsync's stunnel) → the suite its proof
  transfer's ServerHello named, and before that proof OpenSSL 3's first default,
  TLS_AES_256_GCM_SHA384 → aes-256-gcm.
  The cores: one TLS stream is encrypted by one process on the donor (socat, stunnel) and
  decrypted by one on the joiner, and both hosts share this machine, so a byte costs
  1/encrypt + 1/decrypt core-seconds per MiB on min(2 × streams, cores) cores.  mariabackup
  sends one stream whatever its --parallel (one socat), and so do the raw pipelines (tar,
  xbstream: one socat each end); the rsync pipelines one per rsync, `backup_threads` at a
  time (socat forks per connection at both ends); rsync SST one per database directory,
  `backup-threads` at a time (wsrep_sst_rsync's `xargs -P`), each through its own stunnel.
  openssl speed reuses one context on one buffer: the cheapest the cipher can be, so this is
  a ceiling the real stream cannot reach exactly.

A result is set against the lowest of its limits: its MiB/s as a percentage of that limit,
and that limit's name as the binding resource when the result is within AT_LIMIT_PCT of it
(the issue's benchmark: "within 10% of the measured limit").  Far below every limit, none
of them bound it: something none of them measures did (the SST tools' own per-file work)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from encbench.capacity.read import cipher_mb_per_s
from encbench.studies.state_transfer.options import SOCAT_METHODS, SST_CIPHERS
from encbench.studies.state_transfer.records import SstCell

MIB = 2**20
MB = 1_000_000  # openssl speed's unit
TLS_RECORD_BYTES = 16384  # the largest TLS record: a bulk stream's
AT_LIMIT_PCT = 90.0
FAR_BELOW_PCT = 50.0
# OpenSSL 3's default TLS 1.3 ciphersuites begin with this one, which a server that prefers
# its own order (socat, stunnel) then picks; a proof transfer's ServerHello replaces it.
DEFAULT_TLS13_SUITE = "TLS_AES_256_GCM_SHA384"
DISK_READ, DISK_WRITE, LINK, CIPHER = "disk read", "disk write", "link", "cipher"


def evp_cipher(suite: str) -> str | None:
    """openssl speed's name for a TLS suite's bulk cipher (IANA or OpenSSL spelling);
    None for a suite this study does not negotiate."""
    name = suite.upper().replace("_", "-")
    if "CHACHA20" in name:
        return "chacha20-poly1305"
    for bits in ("128", "256"):
        if f"AES-{bits}-GCM" in name or f"AES{bits}-GCM" in name:
            return f"aes-{bits}-gcm"
    return None


def expected_suite(cell: SstCell) -> str:
    """The suite a cell's encrypted stream should negotiate, before its proof says."""
    if cell.method in SOCAT_METHODS and SST_CIPHERS.get(cell.cipher):
        return SST_CIPHERS[cell.cipher]
    return DEFAULT_TLS13_SUITE


def streams(cell: SstCell) -> int:
    """TLS streams the method runs at once (see the module docstring)."""
    return cell.backup_threads if cell.method.startswith("rsync") else 1


def cipher_cores(cell: SstCell, cores: int) -> int:
    return max(1, min(2 * streams(cell), cores))


def ok(part: Any) -> TypeGuard[Mapping[str, Any]]:
    """A measured part of the record (not missing, not an error noted instead)."""
    return isinstance(part, Mapping) and not part.get("error")


def cipher_mib_per_s(
    cipher_json: Mapping[str, Any], evp: str, cores: int, accel: bool = True
) -> float | None:
    """The cipher limit on `cores` cores for one stream's encrypt-and-decrypt, with AES-NI
    or without; None when the cipher was not measured so."""
    speeds = [
        cipher_mb_per_s(cipher_json, evp, TLS_RECORD_BYTES, accel=accel, direction=direction)
        for direction in ("encrypt", "decrypt")
    ]
    if any(s is None or s <= 0 for s in speeds):
        return None
    enc, dec = (float(s) * MB / MIB for s in speeds if s is not None)
    return cores / (1 / enc + 1 / dec)


@dataclass(frozen=True)
class Limits:
    """The limits of one variant of one cell, MiB/s by resource (those measured)."""

    mib_per_s: dict[str, float]
    cipher: str = ""  # e.g. "aes-256-gcm × 2 cores" on the encrypted side


def limits_for(record: Mapping[str, Any], cell: SstCell, variant: str, suite: str = "") -> Limits:
    """`record` is state-transfer.json's "limits"; `suite` what the cell's proof transfer
    negotiated ("" before its proof: the expected one)."""
    out: dict[str, float] = {}
    disk, link = record.get("disk"), record.get("link")
    if ok(disk):
        out[DISK_READ] = float(disk["read_mib_per_s"])
        out[DISK_WRITE] = float(disk["write_mib_per_s"])
    if ok(link):
        out[LINK] = float(link["mib_per_s"])
    if variant != "encrypted":
        return Limits(out)
    evp = evp_cipher(suite or expected_suite(cell))
    cores = cipher_cores(cell, int(record.get("cores") or 1))
    accel = cell.aesni == "on"
    plural = "s" if cores > 1 else ""
    if cell.aesni == "seed-mask":  # openssl speed is not measured under it: no cipher limit
        return Limits(out, f"{evp or suite or '?'} under the 2017 study's mask (not measured)")
    speed = cipher_mib_per_s(record.get("cipher") or {}, evp, cores, accel) if evp else None
    if speed is not None:
        out[CIPHER] = speed
    without = "" if accel else " without AES-NI"
    return Limits(out, f"{evp or suite or '?'}{without} × {cores} core{plural}")


@dataclass(frozen=True)
class Bound:
    """A measured MiB/s against the lowest of its limits."""

    mib_per_s: float
    resource: str  # the lowest limit's name
    limit_mib_per_s: float

    @property
    def pct(self) -> float:
        return 100.0 * self.mib_per_s / self.limit_mib_per_s

    @property
    def binding(self) -> str:
        """The resource that bound the result, or "" when none did."""
        return self.resource if self.pct >= AT_LIMIT_PCT else ""

    @property
    def reading(self) -> str:
        if self.pct >= AT_LIMIT_PCT:
            return f"bound by the {self.resource}"
        if self.pct >= FAR_BELOW_PCT:
            return f"below every limit (nearest: the {self.resource})"
        return "far below every limit: none bound it"


def bound(mib_per_s: float, limits: Limits) -> Bound | None:
    """None when no limit was measured or nothing was moved."""
    if not limits.mib_per_s or mib_per_s <= 0:
        return None
    resource = min(limits.mib_per_s, key=lambda name: limits.mib_per_s[name])
    return Bound(mib_per_s, resource, limits.mib_per_s[resource])
