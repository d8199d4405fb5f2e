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

from encbench import capacity as crypto
from encbench.report.models import Prediction, Record


def predict(
    pages_per_txn: float,
    plain_latency_ms: float,
    measured_ci_pct: tuple[float, float] | None,
    capacity: Record | None,
    algorithm: str,
) -> Prediction | None:
    """`pages_per_txn`: the encrypted server's pages read + written per transaction;
    `measured_ci_pct`: the 95% CI of the measured TPS overhead."""
    if not capacity or algorithm not in crypto.SERVER_CIPHERS:
        return None
    cipher, direction = crypto.SERVER_CIPHERS[algorithm]
    mb_per_s = crypto.cipher_mb_per_s(capacity, cipher, crypto.PAGE_BYTES, direction=direction)
    if not mb_per_s:
        return None
    cipher_ms = pages_per_txn * crypto.PAGE_BYTES / (mb_per_s * 1e6) * 1000.0
    predicted_pct = 100.0 * cipher_ms / plain_latency_ms if plain_latency_ms > 0 else 0.0
    return Prediction(
        cipher=cipher,
        cipher_mb_per_s=mb_per_s,
        pages_per_txn=pages_per_txn,
        cipher_ms_per_txn=cipher_ms,
        predicted_pct=predicted_pct,
        agreement=agreement(predicted_pct, measured_ci_pct),
    )


def agreement(predicted_pct: float, measured_ci_pct: tuple[float, float] | None) -> str:
    if not measured_ci_pct:
        return "too few rounds to compare"
    low, high = measured_ci_pct
    if low <= predicted_pct <= high:
        return "agrees"
    if predicted_pct < low:
        return "measured cost exceeds the cipher work: the rest is around the cipher"
    return "measured cost is below the cipher work: it overlaps with waits"
