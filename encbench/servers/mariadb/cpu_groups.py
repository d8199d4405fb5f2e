"""MariaDB's server's CPU by function group: `perf report --stdio -n --sort dso,sym` (of a
sandboxed server sampled by profiling/perf.py) → CPU nanoseconds per function group: pure
parsing and grouping, unit-tested on a real report in tests/golden/perf/.

With the `cpu-clock` event (a software timer: this VM has no hardware counters) every sample
stands for one sampling period of CPU time, and perf's "Event count" is the total in ns.

What perf can name on Debian: mariadbd is stripped, so only its exported dynamic symbols
resolve (e.g. `do_crypt`, `MyCTX_nopad::update`, `crc32c_3way`); InnoDB's own functions
(fil_space_encrypt, buf_page_*) are hidden and appear as bare addresses.  libcrypto exports
its EVP API (EVP_CipherInit_ex, EVP_CIPHER_CTX_new, …) but not the assembly cipher cores
(aesni_ctr32_encrypt_blocks, aesni_cbc_encrypt), which also appear as bare addresses.  Those
are named by calibration: the libcrypto addresses sampled while `openssl speed -evp` runs the
same cipher (nothing but the cipher core runs there) mark the core's address ranges, and a
server sample inside them is counted as the cipher (`CoreRanges`).  The two processes must map
the same libcrypto file, which crypto.json records (`same_libcrypto_as_openssl`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# In report order; the first matching rule names a sample's group.
CIPHER = "AES cipher core"
EVP_CALLS = "EVP update/final calls"
SETUP = "OpenSSL context set-up and other libcrypto"
GLUE = "encryption glue (do_crypt, MyCTX, key plugin)"
MEMCPY = "memcpy/memmove/memset"
CHECKSUM = "checksums (crc32c)"
LOCKS = "locks and waits (mutex, futex, spin)"
KERNEL = "kernel (I/O, scheduling, syscalls)"
MARIADBD_HIDDEN = "mariadbd, unnamed (InnoDB's hidden symbols)"
LIBCRYPTO_HIDDEN = "libcrypto, unnamed outside the cipher core"
OTHER = "other"
GROUPS = (
    CIPHER, EVP_CALLS, SETUP, GLUE, MEMCPY, CHECKSUM, LOCKS, KERNEL, MARIADBD_HIDDEN,
    LIBCRYPTO_HIDDEN, OTHER,
)  # fmt: skip

_CIPHER_SYMBOL = re.compile(r"aesni_|vpaes_|_aes_|^aes_|^AES_|ctr32|gcm_ghash|ossl_aes", re.I)
_EVP_CALL = re.compile(r"^EVP_(Cipher|Encrypt|Decrypt)(Update|Final)|^EVP_Cipher$")
_GLUE = re.compile(r"do_crypt|MyCTX|my_aes_|encryption_|fil_space_(en|de)crypt|key_management")
_MEMCPY = re.compile(r"mem(cpy|move|set)", re.I)
_CHECKSUM = re.compile(r"crc32|checksum", re.I)
_LOCKS = re.compile(r"mutex|futex|spin|_lock|lock_|srw|pthread_cond|sched_yield", re.I)
_ADDRESS = re.compile(r"^0x[0-9a-f]+$")


@dataclass(frozen=True)
class Entry:
    """One line of the report: a symbol (or bare address) in a shared object."""

    dso: str
    symbol: str
    samples: int

    @property
    def address(self) -> int | None:
        return int(self.symbol, 16) if _ADDRESS.match(self.symbol) else None


@dataclass(frozen=True)
class Report:
    samples: int
    event_count: int  # cpu-clock: nanoseconds of CPU
    entries: tuple[Entry, ...]

    @property
    def ns_per_sample(self) -> float:
        return self.event_count / self.samples if self.samples else 0.0


_LINE = re.compile(r"^\s*[0-9.]+%\s+(\d+)\s+(\S+)\s+\[([.k])\]\s+(.*?)\s*$")
_SAMPLES = re.compile(r"^# Samples: (\d+)([KMG]?)\s+of event '([^']+)'")
_EVENTS = re.compile(r"^# Event count \(approx\.\): (\d+)")
_SCALE = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3}


def parse_report(text: str) -> Report:
    """`perf report --stdio --no-children -n --sort dso,sym`: header lines `# Samples: N of
    event 'cpu-clock'` and `# Event count (approx.): NS`, then `pct samples dso [.] symbol`
    (`[k]`: kernel).  The sample counts come from the lines, which are exact; the header's
    count is rounded (`12K`)."""
    event_count = 0
    entries = []
    event = None
    for line in text.splitlines():
        if match := _SAMPLES.match(line):
            event = match[3]
        elif match := _EVENTS.match(line):
            event_count = int(match[1])
        elif match := _LINE.match(line):
            entries.append(Entry(match[2], match[4], int(match[1])))
    if event is None:
        raise ValueError("no '# Samples: … of event' header in perf report output")
    if event != "cpu-clock":
        raise ValueError(f"the profile sampled {event!r}, not 'cpu-clock'")
    return Report(sum(e.samples for e in entries), event_count, tuple(entries))


@dataclass(frozen=True)
class CoreRanges:
    """The libcrypto address ranges `openssl speed` spent its samples in: the cipher core.
    Addresses closer than `gap` bytes join one range (a function's hot loop is contiguous)."""

    ranges: tuple[tuple[int, int], ...]

    @classmethod
    def from_calibration(cls, report: Report, share: float = 0.9, gap: int = 256) -> CoreRanges:
        """The bare libcrypto addresses holding `share` of the calibration's samples, most
        sampled first: the rare others are the benchmark loop, not the cipher."""
        bare = sorted(
            (e for e in report.entries if _is_libcrypto(e.dso) and e.address is not None),
            key=lambda e: -e.samples,
        )
        total = sum(e.samples for e in bare)
        kept: list[int] = []
        running = 0
        for e in bare:
            if running >= share * total:
                break
            kept.append(e.address or 0)
            running += e.samples
        ranges: list[tuple[int, int]] = []
        for address in sorted(kept):
            if ranges and address - ranges[-1][1] <= gap:
                ranges[-1] = (ranges[-1][0], address)
            else:
                ranges.append((address, address))
        return cls(tuple(ranges))

    def __contains__(self, address: int) -> bool:
        # An instruction sampled a few bytes beyond the last one calibration saw is the same
        # loop; a margin of 64 bytes keeps it in.
        return any(low - 64 <= address <= high + 64 for low, high in self.ranges)


def _is_libcrypto(dso: str) -> bool:
    return dso.startswith("libcrypto")


def group_of(entry: Entry, core: CoreRanges | None) -> str:
    symbol, dso = entry.symbol, entry.dso
    address = entry.address
    if _is_libcrypto(dso):
        if address is not None:
            return CIPHER if core is not None and address in core else LIBCRYPTO_HIDDEN
        if _CIPHER_SYMBOL.search(symbol):
            return CIPHER
        return EVP_CALLS if _EVP_CALL.search(symbol) else SETUP
    if _GLUE.search(symbol) or "file_key_management" in dso:
        return GLUE
    if _MEMCPY.search(symbol):
        return MEMCPY
    if _CHECKSUM.search(symbol):
        return CHECKSUM
    if _LOCKS.search(symbol):
        return LOCKS
    if dso.startswith("[kernel"):
        return KERNEL
    if dso == "mariadbd" and address is not None:
        return MARIADBD_HIDDEN
    return OTHER


def ns_by_group(report: Report, core: CoreRanges | None) -> dict[str, float]:
    """CPU nanoseconds per group (every group present, 0 where nothing was sampled)."""
    out = dict.fromkeys(GROUPS, 0.0)
    for entry in report.entries:
        out[group_of(entry, core)] += entry.samples * report.ns_per_sample
    return out


def top_symbols(report: Report, core: CoreRanges | None, n: int = 12) -> list[dict[str, object]]:
    """The most sampled lines with their group: what a reader checks the grouping against."""
    ranked = sorted(report.entries, key=lambda e: -e.samples)[:n]
    return [
        {"dso": e.dso, "symbol": e.symbol, "samples": e.samples, "group": group_of(e, core)}
        for e in ranked
    ]


@dataclass(frozen=True)
class Breakdown:
    """Extra CPU per transaction and per cipher page, encrypted minus plain, by group."""

    extra_us_per_txn: dict[str, float]
    pages_per_txn: float  # pages through the cipher per transaction (encrypted run)

    @property
    def total_us_per_txn(self) -> float:
        return sum(self.extra_us_per_txn.values())

    def per_page(self) -> dict[str, float] | None:
        if self.pages_per_txn <= 0:
            return None
        return {g: us / self.pages_per_txn for g, us in self.extra_us_per_txn.items()}


def breakdown(
    encrypted_ns: Mapping[str, float],
    encrypted_txns: int,
    plain_ns: Mapping[str, float],
    plain_txns: int,
    pages_per_txn: float,
) -> Breakdown:
    extra = {
        g: (encrypted_ns.get(g, 0.0) / encrypted_txns - plain_ns.get(g, 0.0) / plain_txns) / 1e3
        for g in GROUPS
    }
    return Breakdown(extra, pages_per_txn)


def in_words(b: Breakdown, groups: Iterable[str] = GROUPS, limit: int = 5) -> str:
    """ "of the extra 11.0 µs per page: 4.1 in AES cipher core, 2.0 in …" — the largest
    groups first, by page where pages went through the cipher, else by transaction."""
    per_page = b.per_page()
    values, unit = (per_page, "page") if per_page else (b.extra_us_per_txn, "transaction")
    total = sum(values.values())
    ranked = sorted(((g, values[g]) for g in groups), key=lambda gv: -abs(gv[1]))[:limit]
    parts = ", ".join(f"{us:+.1f} in {g}" for g, us in ranked)
    return f"of the extra {total:.1f} µs per {unit}: {parts}"


def sample_counts(entries: Sequence[Entry]) -> int:
    return sum(e.samples for e in entries)
