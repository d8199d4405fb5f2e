"""The cipher's floor: its own CPU per transaction beside the measured extra server CPU."""

from __future__ import annotations

import pytest

from encbench.studies.at_rest import floor
from encbench.studies.at_rest import section as at_rest_section
from encbench.studies.at_rest.models import AtRestCell
from encbench.studies.at_rest.records import CellKey, RunRecord

CELL = CellKey("oltp_read_only", "io-bound", 4)
# 16384 B at 1638.4 MB/s = 10 µs per page (decrypt); at 819.2 MB/s = 20 µs (encrypt),
# AES-CBC-like: the two directions differ.
CAPACITY = {
    "ciphers": [
        {"cipher": "aes-256-cbc", "block_bytes": 16384, "accel": True, "cores": 1,
         "direction": "decrypt", "mb_per_s_mean": 1638.4},
        {"cipher": "aes-256-cbc", "block_bytes": 16384, "accel": True, "cores": 1,
         "direction": "encrypt", "mb_per_s_mean": 819.2},
    ]
}  # fmt: skip


def run(
    variant: str, cpu_ms_per_txn: float, decrypted: int = 0, encrypted: int = 0, round_: int = 0
) -> RunRecord:
    return RunRecord(
        cell=CELL, round=round_, variant=variant, position=0, session="t", started_at="",
        wall_s=1.0, tps=1000.0, qps=16000.0, transactions=1000, ignored_errors=0,
        reconnects=0, latency_avg_ms=4.0, latency_p95_ms=6.0, latency_max_ms=9.0,
        server_cpu_s=cpu_ms_per_txn, cpu_ms_per_txn=cpu_ms_per_txn, harness_cpu_s=0.0,
        bp_read_requests=100, bp_reads=10, pages_read=decrypted + 5, pages_written=encrypted,
        raw_output="", pages_decrypted=decrypted, pages_encrypted=encrypted,
    )  # fmt: skip


def test_floor_is_pages_times_page_size_over_each_directions_speed() -> None:
    # Hand computation: per txn 20 pages decrypted × 10 µs + 0.5 encrypted × 20 µs = 210 µs.
    # Extra CPU per round: 0.50, 0.40, 0.45 ms → mean 450 µs, sd 50 µs, t(2) = 4.3027:
    # 450 ± 4.3027 × 50 / √3 = 450 ± 124.21 µs.  Share: 210 / 450 = 46.7%, over the
    # interval 210 / 574.21 = 36.6% to 210 / 325.79 = 64.5%.
    enc = [run("encrypted", 1.0 + x, 20_000, 500, i) for i, x in enumerate((0.5, 0.4, 0.45))]
    plain = [run("plain", 1.0, round_=i) for i in range(3)]
    f = floor.cipher_floor(enc, plain, CAPACITY, "AES_CBC")
    assert f is not None
    assert f.decrypt_us_per_page == pytest.approx(10.0)
    assert f.encrypt_us_per_page == pytest.approx(20.0)
    assert f.pages_decrypted_per_txn == pytest.approx(20.0)
    assert f.pages_encrypted_per_txn == pytest.approx(0.5)
    assert f.cipher_us_per_txn == pytest.approx(210.0)
    assert f.extra_cpu_us_per_txn == pytest.approx(450.0)
    assert f.extra_cpu_ci_us == pytest.approx((450 - 124.21, 450 + 124.21), abs=0.01)
    assert f.explained == "the cipher alone explains 47% of the extra CPU (37–64%)"


def test_an_extra_cpu_that_may_be_zero_is_not_divided() -> None:
    enc = [run("encrypted", 1.0 + x, 20_000, 0, i) for i, x in enumerate((0.2, -0.2, 0.1))]
    plain = [run("plain", 1.0, round_=i) for i in range(3)]
    f = floor.cipher_floor(enc, plain, CAPACITY, "AES_CBC")
    assert f is not None
    assert f.explained.startswith("the extra CPU is not distinguishable from 0")


def test_ctr_decryption_falls_back_to_its_encryption_speed() -> None:
    ctr = {"ciphers": [{**CAPACITY["ciphers"][1], "cipher": "aes-256-ctr"}]}
    f = floor.cipher_floor([run("encrypted", 1.2, 1000)], [run("plain", 1.0)], ctr, "AES_CTR")
    assert f is not None and f.decrypt_us_per_page == pytest.approx(20.0)
    assert f.explained == "too few rounds to compare"


def test_no_floor_without_the_speed_or_the_page_counters() -> None:
    enc, plain = [run("encrypted", 1.2, 1000)], [run("plain", 1.0)]
    assert floor.cipher_floor(enc, plain, None, "AES_CBC") is None
    only_decrypt = {"ciphers": CAPACITY["ciphers"][:1]}
    assert floor.cipher_floor(enc, plain, only_decrypt, "AES_CBC") is None
    # A line from before the counters: pages read, none counted as decrypted.
    old = [run("encrypted", 1.2, 0, 0)]
    assert old[0].pages_read > 0
    assert floor.cipher_floor(old, plain, CAPACITY, "AES_CBC") is None


def test_old_lines_read_with_zero_cipher_pages() -> None:
    data = run("encrypted", 1.0, 7, 3).to_json()
    del data["pages_decrypted"], data["pages_encrypted"]
    record = RunRecord.from_json(data)
    assert (record.pages_decrypted, record.pages_encrypted) == (0, 0)


def test_the_floor_table_names_the_share_and_never_latency() -> None:
    enc = [run("encrypted", 1.0 + x, 20_000, 500, i) for i, x in enumerate((0.5, 0.4, 0.45))]
    plain = [run("plain", 1.0, round_=i) for i in range(3)]
    cell = AtRestCell(
        workload=CELL.workload, regime=CELL.regime, threads=CELL.threads, rounds=3,
        measured_s=6.0, status="done", floor=floor.cipher_floor(enc, plain, CAPACITY, "AES_CBC"),
    )  # fmt: skip
    table = at_rest_section.floor_table([cell])
    assert table is not None
    text = " ".join(c.text for r in table.rows for c in r)
    assert "210.0" in text and "+450.0 (+325.8 … +574.2)" in text
    assert "explains 47%" in text
    assert not any("latency" in h for h in table.header)
