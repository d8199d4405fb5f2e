"""Results directories for the estimate's tests, made of runs whose true costs are known: the
encrypted server spends `read_us` more per page it decrypts and `write_us` per page it
encrypts (µs), `handshake_us` per TLS connection and `mib_us` per MiB, with noise, so that
every unit and every validation has a right answer to be held to."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from encbench.results.store import ResultStore
from encbench.studies.at_rest.records import CellKey, RunRecord
from encbench.studies.in_transit.records import TransitCell, TransitRecord

PROFILE = """name = "units-test"
studies = ["at-rest", "in-transit"]
[measure]
workloads = ["oltp_read_only", "oltp_write_only"]
regimes = ["io-bound"]
threads = [1, 4, 16]
interference_max_pct = 100
[transit]
tests = ["connect", "bulk"]
connect_threads = [1, 4]
interference_max_pct = 100
"""


@dataclass(frozen=True)
class Truth:
    read_us: float = 10.0
    write_us: float = 25.0
    handshake_us: float = 2000.0
    mib_us: float = 300.0
    # The per-page read cost by thread count where it is not the same everywhere.
    read_us_by_threads: dict[int, float] = field(default_factory=dict)
    noise: float = 0.02
    rounds: int = 12
    # A duet's CPU: the server on the first CPU pays this share more per transaction, and the
    # two servers swap CPUs every round (blocks form); 0: plain always first, no blocks.
    duet_bias: float = 0.0


def _rest_run(
    cell: CellKey,
    n: int,
    variant: str,
    cpu_ms: float,
    decrypted: int,
    encrypted: int,
    position: int | None = None,
) -> RunRecord:
    transactions = 1000
    if position is None:
        position = 0 if variant == "plain" else 1
    return RunRecord(
        cell=cell, round=n, variant=variant, position=position,
        session="t", started_at=f"2026-02-03T00:00:{n:02d}Z", wall_s=1.0, tps=1000.0,
        qps=16000.0, transactions=transactions, ignored_errors=0, reconnects=0,
        latency_avg_ms=1.0, latency_p95_ms=2.0, latency_max_ms=3.0,
        server_cpu_s=cpu_ms * transactions / 1000.0, cpu_ms_per_txn=cpu_ms,
        harness_cpu_s=0.0, bp_read_requests=100 * transactions, bp_reads=decrypted or 0,
        pages_read=decrypted or 0, pages_written=encrypted or 0, raw_output="",
        pages_decrypted=decrypted if variant == "encrypted" else 0,
        pages_encrypted=encrypted if variant == "encrypted" else 0,
        cpu_source="cgroup2 cpu.stat", cpu_window="event loop", cpu_window_s=1.0,
    )  # fmt: skip


def at_rest_runs(truth: Truth, rng: random.Random) -> list[RunRecord]:
    runs = []
    for workload in ("oltp_read_only", "oltp_write_only"):
        for threads in (1, 4, 16):
            cell = CellKey(workload, "io-bound", threads)
            read_us = truth.read_us_by_threads.get(threads, truth.read_us)
            pages_read = 20_000 if workload == "oltp_read_only" else 8_000  # per 1000 txn
            pages_written = 0 if workload == "oltp_read_only" else 3_000
            for n in range(truth.rounds):
                base = 1.0 * rng.gauss(1.0, truth.noise)  # ms per txn, both variants
                extra_us = (pages_read * read_us + pages_written * truth.write_us) / 1000
                extra_us *= rng.gauss(1.0, truth.noise)
                if not truth.duet_bias:
                    runs.append(_rest_run(cell, n, "plain", base, pages_read, pages_written))
                    runs.append(
                        _rest_run(
                            cell, n, "encrypted", base + extra_us / 1000, pages_read,
                            pages_written,
                        )
                    )  # fmt: skip
                    continue
                plain_at = n % 2  # the CPU plain sits on this round; encrypted the other
                on = [1.0 + truth.duet_bias, 1.0]  # the first CPU costs more
                runs.append(
                    _rest_run(
                        cell, n, "plain", base * on[plain_at], pages_read, pages_written,
                        plain_at,
                    )
                )  # fmt: skip
                runs.append(
                    _rest_run(
                        cell, n, "encrypted", (base + extra_us / 1000) * on[1 - plain_at],
                        pages_read, pages_written, 1 - plain_at,
                    )
                )  # fmt: skip
    return runs


def _transit_run(
    cell: TransitCell, n: int, variant: str, cpu_s: float, events: int, bytes_: int
) -> TransitRecord:
    return TransitRecord(
        cell=cell, round=n, variant=variant, position=0 if variant == "plain" else 1,
        session="t", started_at=f"2026-02-03T00:01:{n:02d}Z", wall_s=1.0, rate=float(events),
        events=events, bytes=bytes_, errors=0, latency_avg_ms=1.0, latency_p95_ms=2.0,
        server_cpu_s=cpu_s, tunnel_cpu_s=0.0, client_cpu_s=0.1, harness_cpu_s=0.0,
        other_cpu_s=0.0, steal_s=0.0,
        tls_handshakes=events if variant == "encrypted" and cell.test == "connect" else
        (1 if variant == "encrypted" else 0),
        tunnel_handshakes=0, tunnel_resumed=0, session_cache_hits=0, raw_output="",
    )  # fmt: skip


def transit_runs(truth: Truth, rng: random.Random) -> list[TransitRecord]:
    runs = []
    for threads in (1, 4):
        cell = TransitCell("connect", "tls", "rsa2048", "", 0, threads)
        for n in range(truth.rounds):
            plain_events, enc_events = 4000, 300
            base = 100e-6 * rng.gauss(1.0, truth.noise)  # s per connection
            extra = truth.handshake_us * 1e-6 * rng.gauss(1.0, truth.noise)
            runs.append(_transit_run(cell, n, "plain", base * plain_events, plain_events, 0))
            runs.append(
                _transit_run(cell, n, "encrypted", (base + extra) * enc_events, enc_events, 0)
            )
    cell = TransitCell("bulk", "tls", "rsa2048", "", 0, 1)
    for n in range(truth.rounds):
        mib = 512.0
        base = 200e-6 * rng.gauss(1.0, truth.noise)  # s per MiB
        extra = truth.mib_us * 1e-6 * rng.gauss(1.0, truth.noise)
        size = int(mib * (1 << 20))
        runs.append(_transit_run(cell, n, "plain", base * mib, 4, size))
        runs.append(_transit_run(cell, n, "encrypted", (base + extra) * mib, 4, size))
    return runs


CRYPTO = {
    "ciphers": [
        {"cipher": "aes-256-ctr", "block_bytes": 16384, "accel": True, "cores": 1,
         "direction": d, "mb_per_s_mean": 6000.0, "mb_per_s_stdev": 60.0, "n": 3}
        for d in ("decrypt", "encrypt")
    ]
}  # fmt: skip


def directory(path: Path, truth: Truth | None = None, seed: int = 3) -> Path:
    """A results directory as a finished run leaves it, with runs made to `truth`."""
    truth = truth or Truth()
    rng = random.Random(seed)
    store = ResultStore.create(path, "units-test", PROFILE)
    for record in [*at_rest_runs(truth, rng), *transit_runs(truth, rng)]:
        store.append(record)
    store.write_json("crypto.json", CRYPTO)
    tls = {"encrypted": "TLSv1.3 TLS_AES_256_GCM_SHA384"}
    cells = ("connect-tls-rsa2048-default-rtt0-t1", "bulk-tls-rsa2048-default-rtt0-t1")
    store.write_json("in-transit.json", {"proofs": dict.fromkeys(cells, tls)})
    store.unlock()
    return path
