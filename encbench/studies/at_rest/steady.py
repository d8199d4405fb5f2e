"""The write path in its steady state (`[measure] write_window = "steady"`).

A production server never flushes to zero between transactions: its page cleaners encrypt
pages as they write them, checkpoints advance, and the redo and binary logs are written as
transactions commit.  In the steady state those run at the rate the load dirties pages, so a
window of the server's CPU over the load alone charges the load with the writes it causes —
without stopping the server to flush (flushing.py's window, which made every write round end
in a stall).

A server reaches that state under load: its dirty pages and its checkpoint age (the redo
written since the last checkpoint) climb from the clean start and level off where the page
cleaner keeps pace.  So a write cell's warm-up runs the load in chunks of CHUNK_S seconds and
reads both after each chunk; the servers have leveled once each one's last READINGS readings
of both lie within a band (`level`), and the warm-up ends there (not before the profile's
warmup_s).  A server that has not leveled after `steady_warmup_max_s` is measured anyway and
its runs say so (RunRecord.leveled false); the report names the cell.

Each run records where both stood at its start and end and the pages the server flushed
meanwhile (Innodb_buffer_pool_pages_flushed), so a reader can see that the window charged
what the load dirtied: a level run starts and ends alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

# One chunk of the warm-up's load between two readings.
CHUNK_S = 5
# How many readings make one mean: the last two chunks are held against the two before, so
# a warm-up is at least four chunks of load (20 s at the default chunk).
READINGS = 2
# The band: two means may differ by this share of the larger, or by the floor below (a
# nearly clean pool's few hundred pages, a nearly empty redo log, swing by more than any
# share of their small mean and are level all the same).
BAND = 0.25
DIRTY_FLOOR_PAGES = 256
AGE_FLOOR_BYTES = 8 * 2**20
# What a chunk takes beyond its load (sysbench's start and connects, the status read): the
# plan's figure.  alibaba-rds-tde's write blocks (2026-12-07) recorded 12.9–14.4 s of set-up
# for a restart and four 3 s chunks: about 0.25 s a chunk beside the restart.
CHUNK_OVERHEAD_S = 0.25
DIRTY = "Innodb_buffer_pool_pages_dirty"
FLUSHED = "Innodb_buffer_pool_pages_flushed"
# MariaDB's checkpoint age; MySQL 8.0.30+ gives the two LSNs instead.
AGE = "Innodb_checkpoint_age"
CURRENT_LSN = "Innodb_redo_log_current_lsn"
CHECKPOINT_LSN = "Innodb_redo_log_checkpoint_lsn"


def design(chunk_s: int) -> str:
    """The design in words for the report's set-up, with the profile's chunk."""
    return (
        "write workloads in their steady state: no flush around a run; the servers' own page "
        "cleaners and checkpoints run as in production. A write cell's warm-up runs the load "
        f"in {chunk_s} s chunks until each server's dirty pages and checkpoint age have "
        f"leveled off (the mean of the last {READINGS} readings within {BAND:.0%} of the mean "
        f"of the {READINGS} before, or within {DIRTY_FLOOR_PAGES} pages and "
        f"{AGE_FLOOR_BYTES // 2**20} MiB). The server's CPU is counted over sysbench's event "
        "loop: in the steady state the page cleaner writes, and encrypts, as many pages as the "
        "load dirties, so the window holds the writes the run's transactions cause; each run "
        "records its dirty pages and checkpoint age at its start and end and the pages flushed "
        "between."
    )


@dataclass(frozen=True)
class State:
    """What a server's status says of its write path at one moment."""

    dirty: int
    checkpoint_age: int | None  # bytes; None where the server gives neither figure
    flushed: int  # Innodb_buffer_pool_pages_flushed, cumulative


def state(status: Mapping[str, str]) -> State:
    """The write path's state from SHOW GLOBAL STATUS (names and values)."""
    age: int | None = None
    if AGE in status:
        age = int(status[AGE])
    elif CURRENT_LSN in status and CHECKPOINT_LSN in status:
        age = int(status[CURRENT_LSN]) - int(status[CHECKPOINT_LSN])
    return State(int(status.get(DIRTY, 0)), age, int(status.get(FLUSHED, 0)))


def _close(earlier: Sequence[int], later: Sequence[int], floor: int) -> bool:
    a, b = sum(earlier) / len(earlier), sum(later) / len(later)
    return abs(b - a) <= max(BAND * max(a, b), floor)


def level(readings: Sequence[State]) -> bool:
    """Whether the write path has leveled off: the mean of the last READINGS readings lies
    within the band of the mean of the READINGS before them, for dirty pages and checkpoint
    age alike (a server without a checkpoint age is judged by its dirty pages).  Means of
    several readings, because one reading swings: on a 46 MB pool under 16 writing threads
    dirty pages moved 900–1,500 from one 5 s chunk to the next around a level of 1,250."""
    if len(readings) < 2 * READINGS:
        return False
    earlier, later = readings[-2 * READINGS : -READINGS], readings[-READINGS:]
    if not _close([r.dirty for r in earlier], [r.dirty for r in later], DIRTY_FLOOR_PAGES):
        return False
    ages = [r.checkpoint_age for r in (*earlier, *later)]
    if any(a is None for a in ages):
        return True
    return _close(
        [r.checkpoint_age or 0 for r in earlier],
        [r.checkpoint_age or 0 for r in later],
        AGE_FLOOR_BYTES,
    )


@dataclass
class Leveling:
    """How a warm-up to the steady state went: its seconds, whether every server leveled,
    and each one's readings (dirty pages, checkpoint age) chunk by chunk."""

    seconds: float = 0.0
    level: bool = False
    readings: dict[str, list[State]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds, 1),
            "level": self.level,
            "readings": {
                name: [[r.dirty, r.checkpoint_age] for r in states]
                for name, states in self.readings.items()
            },
        }


def warm_until_level(
    load: Callable[[int, int], None],
    read: Callable[[], Mapping[str, State]],
    *,
    min_s: float,
    max_s: float,
    chunk_s: int = CHUNK_S,
) -> Leveling:
    """Run `load(chunk number, seconds)` in chunks of chunk_s, reading every server's state
    (`read`) after each, until all have leveled and min_s has passed, or max_s has."""
    started = time.monotonic()
    out = Leveling()
    chunk = 0
    while True:
        load(chunk, chunk_s)
        chunk += 1
        for name, now in read().items():
            out.readings.setdefault(name, []).append(now)
        out.seconds = time.monotonic() - started
        out.level = all(level(states) for states in out.readings.values())
        if (out.level and out.seconds >= min_s) or out.seconds >= max_s:
            return out
