"""PostgreSQL's unit costs at rest: PostgreSQL has no encryption of its own, so what
encbench measures is its data directory on an fscrypt-encrypted filesystem (the at-rest
study's [pg_at_rest] cells), and the units are the filesystem layer's per 8 KiB block:

  fs block read     io-bound read cells (select_only, and sysbench's read-only):
                    (encrypted − plain CPU per txn) ÷ blocks read per txn
  fs block written  write cells:  (encrypted − plain CPU per txn
                                   − block-read cost × blocks read per txn)
                                  ÷ (blocks written + WAL bytes ÷ 8 KiB) per txn

CPU is the server's (postmaster and backends) and the kernel threads' over the run: fscrypt
decrypts a read in a kernel worker and encrypts at writeback, outside PostgreSQL's
processes.  A block read is pg_stat_database's blks_read, which counts a block the kernel's
page cache held (no decryption) as one read from disk: the unit is per block PostgreSQL
asked for, at the cells' page cache hit ratio, as the estimate counts them.  The WAL is in
the same data directory, so its writes are encrypted too and count as blocks written.
Only runs that recorded these counters (servers/postgresql/counters.py) give a unit.

Here the per-round values of each cell; units.py summarizes them (its interval rule) into
units, as it does MariaDB's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from encbench.studies.at_rest import CellKey, RunRecord

BLOCK_BYTES = 8192  # PostgreSQL's block (and a WAL page)
READ_WORKLOADS = frozenset({"select_only", "oltp_read_only", "oltp_point_select"})
PREDATES = (
    "its PostgreSQL runs were recorded before they counted blocks and WAL bytes: measure "
    "them again (`--measure-units --units-profile estimate-units-postgresql`)"
)

Pairs = Callable[[CellKey], list[tuple[RunRecord, RunRecord]]]


class CellRounds(NamedTuple):
    """One cell's per-round values of a unit (µs), and its first run's start."""

    label: str
    values: list[float]
    started: str


def configuration(fscrypt_contents: str) -> str:
    return f"fscrypt {fscrypt_contents}, 8 KiB blocks"


def predates(runs: Sequence[RunRecord]) -> bool:
    """Runs recorded before the block counters: none of them can give a unit."""
    return bool(runs) and all(r.blocks_read is None for r in runs)


def _cpu_s(r: RunRecord) -> float | None:
    if r.kernel_cpu_s is None or r.server_cpu_s is None:
        return None
    return r.server_cpu_s + r.kernel_cpu_s


def extra_us_per_txn(e: RunRecord, p: RunRecord) -> float | None:
    """Encrypted − plain CPU (server and kernel threads) per transaction, µs."""
    ce, cp = _cpu_s(e), _cpu_s(p)
    if ce is None or cp is None:
        return None
    return 1e6 * (ce / e.transactions - cp / p.transactions)


def written_blocks(r: RunRecord) -> float | None:
    if r.blocks_written is None or r.wal_bytes is None:
        return None
    return r.blocks_written + r.wal_bytes / BLOCK_BYTES


def is_read_cell(cell: CellKey) -> bool:
    return cell.regime == "io-bound" and cell.workload in READ_WORKLOADS


def is_write_cell(cell: CellKey) -> bool:
    return cell.workload not in READ_WORKLOADS


def _rounds(
    cells: Sequence[CellKey],
    pairs: Pairs,
    value: Callable[[RunRecord, RunRecord], float | None],
) -> list[CellRounds]:
    found = []
    for cell in cells:
        paired = pairs(cell)
        values = [v for e, p in paired if (v := value(e, p)) is not None]
        if paired:
            found.append(CellRounds(cell.label, values, min(e.started_at for e, _ in paired)))
    return found


def block_read_rounds(cells: Sequence[CellKey], pairs: Pairs) -> list[CellRounds]:
    def per_block(e: RunRecord, p: RunRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        if extra is None or not e.blocks_read:
            return None
        return extra / (e.blocks_read / e.transactions)

    return _rounds([c for c in cells if is_read_cell(c)], pairs, per_block)


def block_written_rounds(
    cells: Sequence[CellKey], pairs: Pairs, read_us: float | None
) -> list[CellRounds]:
    """Per block written, the reads of the same transactions taken out at the block-read
    cost; without that cost only runs that read nothing count."""

    def per_block(e: RunRecord, p: RunRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        blocks = written_blocks(e)
        if extra is None or not blocks or e.blocks_read is None:
            return None
        if e.blocks_read > 0:
            if read_us is None:
                return None
            extra -= read_us * e.blocks_read / e.transactions
        return extra / (blocks / e.transactions)

    return _rounds([c for c in cells if is_write_cell(c)], pairs, per_block)
