"""What the data device did over a measured window: /proc/diskstats read before and after.

Why the device and not the server: what bounds an io-bound run is the device's queue, which
every process on the machine shares, and the kernel keeps its busy time (`io_ticks`, the
milliseconds with at least one request in flight) only per device.  Utilisation is that busy
time over the window (iostat's %util); the queue is the time-weighted requests in flight
(iostat's aqu-sz); the latency is the time requests spent, per request (iostat's await).
On a virtual disk %util near 100 says the queue was never empty, not that the device could
do no more: the report reads it beside IOPS and latency.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DISKSTATS = Path("/proc/diskstats")
SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


def device_of(path: Path, sys_block: Path = Path("/sys/dev/block")) -> str | None:
    """The /proc/diskstats name of the block device that holds `path` (vda, nvme0n1p2,
    loop3), or None where there is none (tmpfs, overlay without a device, a path that
    does not exist yet)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    link = sys_block / f"{os.major(dev)}:{os.minor(dev)}"
    try:
        return link.resolve(strict=True).name
    except OSError:
        return None


@dataclass(frozen=True)
class DiskCounters:
    """One reading of a device's line in /proc/diskstats (Documentation/admin-guide/
    iostats.rst: fields 4-14 of each line)."""

    reads: int
    sectors_read: int
    ms_reading: int
    writes: int
    sectors_written: int
    ms_writing: int
    ms_busy: int  # io_ticks
    ms_weighted: int  # time_in_queue

    @classmethod
    def read(cls, device: str, stats: Path = DISKSTATS) -> DiskCounters | None:
        for line in stats.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 14 and fields[2] == device:
                n = [int(f) for f in fields[3:14]]
                return cls(
                    reads=n[0],
                    sectors_read=n[2],
                    ms_reading=n[3],
                    writes=n[4],
                    sectors_written=n[6],
                    ms_writing=n[7],
                    ms_busy=n[9],
                    ms_weighted=n[10],
                )
        return None


@dataclass(frozen=True)
class DiskWindow:
    """The differences of two readings over `wall_s` seconds, as iostat shows them."""

    busy_pct: float
    iops: float
    read_mib_s: float
    write_mib_s: float
    queue: float  # requests in flight on average
    await_ms: float  # per request, queueing included; 0 without requests

    @classmethod
    def between(cls, start: DiskCounters, end: DiskCounters, wall_s: float) -> DiskWindow:
        if wall_s <= 0:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        ios = (end.reads - start.reads) + (end.writes - start.writes)
        waited = (end.ms_reading - start.ms_reading) + (end.ms_writing - start.ms_writing)
        mib = SECTOR_BYTES / 2**20
        return cls(
            # io_ticks can run a tick ahead of the wall clock over a short window.
            busy_pct=min(100.0, (end.ms_busy - start.ms_busy) / 10.0 / wall_s),
            iops=ios / wall_s,
            read_mib_s=(end.sectors_read - start.sectors_read) * mib / wall_s,
            write_mib_s=(end.sectors_written - start.sectors_written) * mib / wall_s,
            queue=(end.ms_weighted - start.ms_weighted) / 1000.0 / wall_s,
            await_ms=waited / ios if ios > 0 else 0.0,
        )
