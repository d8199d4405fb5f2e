"""The server's own counters over a window, read without changing anything on it: the
window's one session (the first kind's part, estimate/kinds.py, opens it: no TLS, the
harness's reads are no handshakes of the server's), its settings at both ends, its status
counters every 10 s — so that the rates' variation over the window is known, not only their
mean — and, where the user gives ssh, the server process's CPU on its host at the same
moments (servers/remote_cpu.py).  Which counters, and the rates of them, are the kind's;
the window's own traffic it takes out (its session's bytes, asked at each reading).

Rates, Sample and Window are every kind's: a kind read otherwise (kind_target.py) gives its
rates by the same fields.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Protocol

from encbench.errors import BadInput
from encbench.report.models import Model

SAMPLE_S = 10.0  # one reading, and one line of progress, per 10 s
MIN_SECONDS = 10
MAX_SECONDS = 24 * 3600


class Rates(Model):
    """One interval of the window: each counter's growth per second (None: the server does
    not count it) and the server's CPU in cores (None: not read)."""

    seconds: float
    pages_read: float
    pages_written: float
    buffer_pool_reads: float | None
    redo_bytes: float | None
    binlog_bytes: float | None
    connections: float
    tls_handshakes: float | None
    bytes: float  # sent and received, less the window's own
    pages_decrypted: float | None
    pages_encrypted: float | None
    server_cores: float | None = None


class Sample(Model):
    """One reading: when (monotonic seconds), the counters, the harness's own bytes, and the
    server's CPU seconds so far where read."""

    at_s: float
    counters: dict[str, int]
    own_bytes: int
    cpu_s: float | None


class Window(Model):
    """The whole window: its settings at the start, what changed by its end, its intervals."""

    started_at: str  # UTC, ISO 8601
    seconds: float
    variables: dict[str, str]
    changed: dict[str, tuple[str, str]]  # a variable set during the window: before, after
    intervals: list[Rates]
    missing: list[str]  # optional counters this server does not have
    server_cpu: str  # where the server's CPU was read, or why it was not
    host_cores: int | None = None  # the server's host's CPUs, where read over ssh


class Session(Protocol):
    def status(self) -> dict[str, str]: ...
    def variables(self) -> dict[str, str]: ...
    def own_bytes(self) -> int: ...


class CpuReader(Protocol):
    def read_s(self) -> float: ...


class StatusKind(Protocol):
    """What a kind read by its status counters over one session gives (the first kind's
    part, estimate/kinds.py): which counters it reads, and its rates between two readings
    by Rates' fields."""

    @property
    def OPTIONAL(self) -> tuple[str, ...]: ...

    def counted(self, status: Mapping[str, str]) -> dict[str, int]: ...
    def interval_rates(self, a: Sample, b: Sample) -> dict[str, float | None]: ...


def read_sample(
    part: StatusKind, session: Session, cpu: CpuReader | None, clock: Callable[[], float]
) -> Sample:
    counters = part.counted(session.status())
    own = session.own_bytes()
    return Sample(
        at_s=clock(), counters=counters, own_bytes=own, cpu_s=cpu.read_s() if cpu else None
    )


def interval_rates(part: StatusKind, a: Sample, b: Sample) -> Rates:
    """Each counter's growth per second between two readings, as the kind counts it."""
    return Rates.model_validate(part.interval_rates(a, b))


def progress_line(elapsed_s: float, seconds: float, rates: Rates) -> str:
    line = (
        f"estimate: {elapsed_s:.0f} s of {seconds:.0f}: {rates.pages_read:,.0f} pages read/s, "
        f"{rates.pages_written:,.0f} written/s, {rates.connections:,.1f} connections/s, "
        f"{rates.bytes / (1 << 20):,.2f} MiB/s sent and received"
    )
    if rates.server_cores is not None:
        line += f", server CPU {rates.server_cores:.2f} cores"
    return line


def sample_window(
    part: StatusKind,
    session: Session,
    seconds: float,
    cpu: CpuReader | None,
    cpu_words: str,
    progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Window:
    """`seconds` of readings, one every ~10 s (the window cut into equal intervals), with a
    line of progress after each."""
    count = max(1, round(seconds / SAMPLE_S))
    step = seconds / count
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    before = session.variables()
    samples = [read_sample(part, session, cpu, clock)]
    start = samples[0].at_s
    intervals = []
    for i in range(1, count + 1):
        sleep(max(0.0, start + i * step - clock()))
        samples.append(read_sample(part, session, cpu, clock))
        intervals.append(interval_rates(part, samples[-2], samples[-1]))
        progress(progress_line(samples[-1].at_s - start, seconds, intervals[-1]))
    after = session.variables()
    changed = {k: (before[k], after.get(k, "")) for k in before if after.get(k) != before[k]}
    return Window(
        started_at=started_at,
        seconds=samples[-1].at_s - start,
        variables=before,
        changed=changed,
        intervals=intervals,
        missing=[name for name in part.OPTIONAL if name not in samples[0].counters],
        server_cpu=cpu_words,
    )


def check_seconds(seconds: int) -> None:
    if not MIN_SECONDS <= seconds <= MAX_SECONDS or not math.isfinite(seconds):
        raise BadInput(
            f"--seconds {seconds}: give {MIN_SECONDS} to {MAX_SECONDS} (one reading per "
            f"{SAMPLE_S:.0f} s; the default 60 gives six)"
        )
