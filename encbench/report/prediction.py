"""The physical ceiling beside the measured overhead: how much of a transaction's time the
cipher work alone would take, from this machine's own `openssl speed` figure.

  cipher work per transaction = (pages read + pages written per transaction) × page size
                                ÷ the measured speed of the server's cipher (one core)
  predicted ceiling           = cipher work ÷ the plain server's mean latency per transaction

Only the encrypted server's page I/O is counted: pages in the buffer pool are plaintext, so a
transaction served from memory does no cipher work at all.  Disagreement is information:
measured above the prediction means the cost lies around the cipher (extra copies, the I/O
path, locks); below it means the work overlaps with waits that the latency already had.
"""

from __future__ import annotations

from typing import Any

from encbench import capacity as crypto


def predict(
    cell: dict[str, Any], capacity: dict[str, Any] | None, algorithm: str
) -> dict[str, Any] | None:
    if not capacity:
        return None
    cipher, direction = crypto.SERVER_CIPHERS[algorithm]
    mb_per_s = crypto.cipher_mb_per_s(capacity, cipher, crypto.PAGE_BYTES, direction=direction)
    if not mb_per_s:
        return None
    enc = cell["variants"]["encrypted"]
    pages = enc["pages_read_per_txn"]["mean"] + enc["pages_written_per_txn"]["mean"]
    cipher_ms = pages * crypto.PAGE_BYTES / (mb_per_s * 1e6) * 1000.0
    latency_ms = cell["variants"]["plain"]["latency_avg_ms"]["mean"]
    predicted_pct = 100.0 * cipher_ms / latency_ms if latency_ms > 0 else 0.0
    tps = cell["comparisons"]["tps"]
    return {
        "cipher": cipher,
        "cipher_mb_per_s": mb_per_s,
        "pages_per_txn": pages,
        "cipher_ms_per_txn": cipher_ms,
        "predicted_pct": predicted_pct,
        "agreement": agreement(predicted_pct, tps.get("overhead_ci_pct")),
    }


def agreement(predicted_pct: float, measured_ci_pct: list[float] | None) -> str:
    if not measured_ci_pct:
        return "too few rounds to compare"
    low, high = measured_ci_pct
    if low <= predicted_pct <= high:
        return "agrees"
    if predicted_pct < low:
        return "measured cost exceeds the cipher work: the rest is around the cipher"
    return "measured cost is below the cipher work: it overlaps with waits"
