"""MariaDB's server's CPU by function group (servers/mariadb/cpu_groups.py), on real perf
reports (tests/golden/perf/)."""

from __future__ import annotations

import pytest

from encbench.servers.mariadb import cpu_groups as groups
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "perf"


def report(name: str) -> groups.Report:
    return groups.parse_report((GOLDEN / name).read_text())


def test_the_report_is_read_line_by_line_with_exact_sample_counts() -> None:
    r = report("oltp_read_only-io-bound-t2-encrypted.txt")
    assert r.samples == 2155  # the sum of the lines; the header says the same
    assert r.event_count == 2157157155  # ns of CPU: 2155 samples × 1/999 s (999 Hz)
    assert r.ns_per_sample == pytest.approx(1_001_000, rel=1e-3)
    crc = next(e for e in r.entries if e.symbol == "crc32c_3way")
    assert (crc.dso, crc.samples, crc.address) == ("mariadbd", 40, None)
    bare = next(e for e in r.entries if e.symbol == "0x00000000000ddf1a")
    assert bare.address == 0xDDF1A and bare.dso == "libcrypto.so.3"


def test_a_report_of_another_event_or_no_report_is_refused() -> None:
    with pytest.raises(ValueError, match="no '# Samples"):
        groups.parse_report("perf: not a report\n")
    with pytest.raises(ValueError, match="'cycles'"):
        groups.parse_report("# Samples: 10  of event 'cycles'\n")


def test_calibration_finds_the_cipher_core_that_openssl_speed_runs() -> None:
    core = groups.CoreRanges.from_calibration(report("calibrate-aes-256-ctr-decrypt.txt"))
    # One hot loop: the unexported AES-CTR core at 0xdd... in this libcrypto.
    assert len(core.ranges) == 1
    low, high = core.ranges[0]
    assert 0xDD000 <= low < high < 0xDF000
    assert 0xDDF1A in core and 0x23D74C not in core


def test_server_samples_fall_into_named_groups() -> None:
    core = groups.CoreRanges.from_calibration(report("calibrate-aes-256-ctr-decrypt.txt"))
    e = groups.Entry
    assert groups.group_of(e("libcrypto.so.3", "0x00000000000ddf1a", 1), core) == groups.CIPHER
    assert groups.group_of(e("libcrypto.so.3", "0x000000000023d74c", 1), core) == (
        groups.LIBCRYPTO_HIDDEN
    )
    assert groups.group_of(e("libcrypto.so.3", "EVP_CIPHER_fetch", 1), core) == groups.SETUP
    assert groups.group_of(e("libcrypto.so.3", "EVP_DecryptUpdate", 1), core) == groups.EVP_CALLS
    assert groups.group_of(e("mariadbd", "crc32c_3way", 1), core) == groups.CHECKSUM
    assert groups.group_of(e("file_key_management.so", "0x23b7", 1), core) == groups.GLUE
    assert groups.group_of(e("libc.so.6", "__memmove_avx_unaligned_erms", 1), core) == (
        groups.MEMCPY
    )
    assert groups.group_of(e("[kernel.kallsyms]", "_raw_spin_lock", 1), core) == groups.LOCKS
    assert groups.group_of(e("[kernel.kallsyms]", "iowrite16", 1), core) == groups.KERNEL
    assert groups.group_of(e("mariadbd", "0x0000000000e1e1e1", 1), core) == (groups.MARIADBD_HIDDEN)


def test_the_plain_server_runs_no_cipher_and_the_encrypted_one_does() -> None:
    core = groups.CoreRanges.from_calibration(report("calibrate-aes-256-ctr-decrypt.txt"))
    plain = groups.ns_by_group(report("oltp_read_only-io-bound-t2-plain.txt"), core)
    enc = groups.ns_by_group(report("oltp_read_only-io-bound-t2-encrypted.txt"), core)
    assert plain[groups.CIPHER] == 0 and plain[groups.SETUP] == 0
    # 20177 pages decrypted over 1128 transactions: about 2.3 µs of AES core per page, the
    # same order as openssl speed's 2.35 µs per 16 KiB page for AES-256-CTR on this machine.
    per_page_us = enc[groups.CIPHER] / 20177 / 1e3
    assert 1.0 < per_page_us < 5.0
    total = report("oltp_read_only-io-bound-t2-encrypted.txt")
    assert sum(enc.values()) == pytest.approx(total.samples * total.ns_per_sample)


def test_breakdown_is_encrypted_minus_plain_per_txn_and_per_page() -> None:
    # Hand computation: AES 2,000,000 ns / 100 txn = 20 µs vs 0; kernel 50 µs vs 60 µs.
    enc = {groups.CIPHER: 2_000_000.0, groups.KERNEL: 5_000_000.0}
    plain = {groups.KERNEL: 12_000_000.0}
    b = groups.breakdown(enc, 100, plain, 200, pages_per_txn=4.0)
    assert b.extra_us_per_txn[groups.CIPHER] == pytest.approx(20.0)
    assert b.extra_us_per_txn[groups.KERNEL] == pytest.approx(-10.0)
    assert b.total_us_per_txn == pytest.approx(10.0)
    per_page = b.per_page()
    assert per_page is not None and per_page[groups.CIPHER] == pytest.approx(5.0)
    assert groups.in_words(b, limit=2) == (
        "of the extra 2.5 µs per page: +5.0 in AES cipher core, "
        "-2.5 in kernel (I/O, scheduling, syscalls)"
    )
