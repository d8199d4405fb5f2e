"""The predicted ceiling: cipher work per transaction over the transaction's time."""

import pytest

from encbench.report import prediction

CAPACITY = {
    "ciphers": [
        {
            "cipher": "aes-256-ctr",
            "block_bytes": 16384,
            "accel": True,
            "cores": 1,
            "direction": "decrypt",
            "mb_per_s_mean": 1638.4,
        },
    ]
}


def test_cipher_work_is_pages_times_page_size_over_speed() -> None:
    # 20 pages × 16384 B at 1638.4 MB/s = 0.2 ms; over a 4 ms transaction: 5%.
    p = prediction.predict(20, 4.0, (3.0, 7.0), CAPACITY, "AES_CTR")
    assert p is not None
    assert p.cipher_ms_per_txn == pytest.approx(0.2)
    assert p.predicted_pct == pytest.approx(5.0)
    assert p.agreement == "agrees"


def test_disagreement_is_named_both_ways() -> None:
    above = prediction.predict(20, 4.0, (8.0, 12.0), CAPACITY, "AES_CTR")
    below = prediction.predict(20, 4.0, (0.5, 2.0), CAPACITY, "AES_CTR")
    assert above is not None and below is not None
    assert above.agreement.startswith("measured cost exceeds the cipher work")
    assert below.agreement.startswith("measured cost is below the cipher work")


def test_no_prediction_without_the_servers_cipher() -> None:
    assert prediction.predict(20, 4.0, None, CAPACITY, "AES_CBC") is None
    assert prediction.predict(20, 4.0, None, None, "AES_CTR") is None
