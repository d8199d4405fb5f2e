"""The cipher's floor beside the measured extra CPU: how much of the encrypted server's extra
CPU per transaction the cipher's own work explains, from this machine's `openssl speed`.

  cipher µs per txn = pages decrypted per txn × 16 KiB ÷ the decrypt speed
                    + pages encrypted per txn × 16 KiB ÷ the encrypt speed
  extra CPU per txn = mean over rounds of (encrypted − plain server CPU per txn),
                      with its Student-t 95% interval (paired: both runs of a round)
  explained         = cipher µs ÷ extra CPU µs

The page counts are InnoDB's own (Innodb_num_pages_decrypted / _encrypted deltas of the
encrypted server): pages in the buffer pool are plaintext, so only pages read from or written
to disk pass through the cipher.  The speeds are `openssl speed -evp` with one context reused
over many 16 KiB buffers, the cheapest way to run the cipher; InnoDB sets up a new context per
page (workloads/pagecrypt.c measures that pattern).  So the figure is a floor: the CPU
encryption cannot cost less than this; whatever of the extra CPU it does not explain lies
around the cipher (context set-up, copies, checksums, locks), which the CPU profile
(report/cost_profile.py) breaks down where it was measured.

The floor is compared with CPU, not with latency: above 2 threads a transaction's latency is
mostly queueing, so a share of latency says nothing about where the cost is.
"""

from __future__ import annotations

from collections.abc import Sequence

from encbench import capacity as crypto
from encbench import stats
from encbench.report.models import Record
from encbench.studies.at_rest.models import CipherFloor
from encbench.studies.at_rest.records import RunRecord


def page_us(capacity: Record, cipher: str, direction: crypto.Direction) -> float | None:
    """CPU µs per 16 KiB page in one direction; None if that speed was not measured."""
    mb_per_s = crypto.cipher_mb_per_s(capacity, cipher, crypto.PAGE_BYTES, direction=direction)
    return crypto.PAGE_BYTES / (mb_per_s * 1e6) * 1e6 if mb_per_s else None


def cipher_floor(
    encrypted: Sequence[RunRecord],
    plain: Sequence[RunRecord],
    capacity: Record | None,
    algorithm: str,
) -> CipherFloor | None:
    """`encrypted` and `plain`: the two runs of each complete round, in round order.  None
    when the cipher's speed was not measured, or the records predate the page counters (an
    encrypted server that read pages yet decrypted none did not count them)."""
    if not capacity or algorithm not in crypto.SERVER_CIPHERS or not encrypted:
        return None
    cipher = crypto.SERVER_CIPHERS[algorithm]
    decrypt_us = page_us(capacity, cipher, "decrypt")
    encrypt_us = page_us(capacity, cipher, "encrypt")
    if decrypt_us is None or encrypt_us is None:
        return None
    if not any(r.pages_decrypted or r.pages_encrypted for r in encrypted) and any(
        r.pages_read for r in encrypted
    ):
        return None
    decrypted = stats.mean_and_stdev([r.pages_decrypted / r.transactions for r in encrypted])[0]
    encrypted_pages = stats.mean_and_stdev([r.pages_encrypted / r.transactions for r in encrypted])[
        0
    ]
    cipher_us = decrypted * decrypt_us + encrypted_pages * encrypt_us
    pairs = zip(encrypted, plain, strict=True)
    extra = [
        1000.0 * (e.cpu_ms_per_txn - p.cpu_ms_per_txn)
        for e, p in pairs
        if e.cpu_ms_per_txn is not None and p.cpu_ms_per_txn is not None
    ]
    if len(extra) < len(encrypted):
        return None  # the server's CPU was not measured (a target): no extra to set beside it
    extra_us, extra_sd = stats.mean_and_stdev(extra)
    extra_ci = stats.mean_ci(extra_us, extra_sd, len(extra))
    return CipherFloor(
        cipher=cipher,
        decrypt_us_per_page=decrypt_us,
        encrypt_us_per_page=encrypt_us,
        pages_decrypted_per_txn=decrypted,
        pages_encrypted_per_txn=encrypted_pages,
        cipher_us_per_txn=cipher_us,
        extra_cpu_us_per_txn=extra_us,
        extra_cpu_ci_us=extra_ci,
        explained=explained_in_words(cipher_us, extra_us, extra_ci),
    )


def explained_in_words(
    cipher_us: float, extra_us: float, extra_ci: tuple[float, float] | None
) -> str:
    """ "the cipher alone explains X% of the extra CPU", with the range the extra CPU's
    interval allows; an extra CPU that may be 0 leaves nothing to divide."""
    if cipher_us <= 0:
        return "no page went through the cipher: the extra CPU is not the cipher's"
    if extra_ci is None:
        return "too few rounds to compare"
    low, high = extra_ci
    if low <= 0:
        return (
            "the extra CPU is not distinguishable from 0 "
            f"(95% CI {low:+.1f} … {high:+.1f} µs): nothing to explain"
        )
    pct = 100.0 * cipher_us / extra_us
    return (
        f"the cipher alone explains {pct:.0f}% of the extra CPU "
        f"({100.0 * cipher_us / high:.0f}–{100.0 * cipher_us / low:.0f}%)"
    )
