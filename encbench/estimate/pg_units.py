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
Only runs that recorded these counters (servers/pg_counters.py) give a unit; the interval
rule is units.py's (_summarize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.estimate.units import CellValues, StudyRuns, Unit, _summarize, _values
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.studies.at_rest.postgresql.options import measured, pg_at_rest_options
from encbench.studies.at_rest.postgresql.records import PgAtRestCell, PgAtRestRecord

BLOCK_BYTES = 8192  # PostgreSQL's block (and a WAL page)
READ_WORKLOADS = frozenset({"select_only", "oltp_read_only", "oltp_point_select"})


def _cpu_s(r: PgAtRestRecord) -> float | None:
    return None if r.kernel_cpu_s is None else r.server_cpu_s + r.kernel_cpu_s


def extra_us_per_txn(e: PgAtRestRecord, p: PgAtRestRecord) -> float | None:
    """Encrypted − plain CPU (server and kernel threads) per transaction, µs."""
    ce, cp = _cpu_s(e), _cpu_s(p)
    if ce is None or cp is None:
        return None
    return 1e6 * (ce / e.transactions - cp / p.transactions)


def written_blocks(r: PgAtRestRecord) -> float | None:
    if r.blocks_written is None or r.wal_bytes is None:
        return None
    return r.blocks_written + r.wal_bytes / BLOCK_BYTES


def is_read_cell(cell: PgAtRestCell) -> bool:
    return cell.regime == "io-bound" and cell.workload in READ_WORKLOADS


def is_write_cell(cell: PgAtRestCell) -> bool:
    return cell.workload not in READ_WORKLOADS


def pg_runs(store: ResultStore, profile: Profile) -> StudyRuns | None:
    """The directory's PostgreSQL at-rest runs, None where its profile measured none."""
    if not measured(profile):
        return None
    return StudyRuns(store.runs(PgAtRestRecord), pg_at_rest_options(profile), profile, {})


def _cells(source: StudyRuns, keep: Callable[[PgAtRestCell], bool]) -> list[Any]:
    return [c for c in source.cells() if keep(c)]


def block_read_cells(source: StudyRuns, exclude: object = None) -> list[CellValues]:
    def per_block(e: PgAtRestRecord, p: PgAtRestRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        if extra is None or not e.blocks_read:
            return None
        return extra / (e.blocks_read / e.transactions)

    cells = [c for c in _cells(source, is_read_cell) if c != exclude]
    return _values(source, cells, per_block)


def configuration(source: StudyRuns) -> str:
    """The filesystem layer's cipher as the profile set it."""
    return f"fscrypt {source.profile.server.fscrypt_contents}, 8 KiB blocks"


def block_read_unit(source: StudyRuns, where: str, exclude: object = None) -> Unit | str:
    return _summarize(
        "fs_block_read",
        block_read_cells(source, exclude),
        what_cells="PostgreSQL io-bound read cells",
        configuration=configuration(source),
        cipher=None,
        source=where,
    )


def block_written_unit(
    source: StudyRuns, where: str, read_us: float | None, exclude: object = None
) -> Unit | str:
    def per_block(e: PgAtRestRecord, p: PgAtRestRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        blocks = written_blocks(e)
        if extra is None or not blocks or e.blocks_read is None:
            return None
        if e.blocks_read > 0:
            if read_us is None:
                return None
            extra -= read_us * e.blocks_read / e.transactions
        return extra / (blocks / e.transactions)

    cells = [c for c in _cells(source, is_write_cell) if c != exclude]
    return _summarize(
        "fs_block_written",
        _values(source, cells, per_block),
        what_cells="PostgreSQL write cells",
        configuration=configuration(source),
        cipher=None,
        source=where,
    )


def from_store(store: ResultStore, profile: Profile, where: str) -> dict[str, Unit | str]:
    """The two units a directory's PostgreSQL cells give, or why not; {} where it measured
    no PostgreSQL."""
    source = pg_runs(store, profile)
    if source is None:
        return {}
    if source.runs and all(r.blocks_read is None for r in source.runs):
        why = (
            "its PostgreSQL runs were recorded before they counted blocks and WAL bytes: "
            "measure them again (`--measure-units --units-profile estimate-units-postgresql`)"
        )
        return {"fs_block_read": why, "fs_block_written": why}
    read = block_read_unit(source, where)
    read_us = read.us if isinstance(read, Unit) else None
    return {"fs_block_read": read, "fs_block_written": block_written_unit(source, where, read_us)}
