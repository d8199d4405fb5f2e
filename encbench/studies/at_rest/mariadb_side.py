"""MariaDB's (and MySQL's) side of the data-at-rest study: a plain and an encrypted
sandboxed server, identical but for the encryption options, provisioned, filled and proven
once; per regime both are restarted with that regime's buffer pool; a run is one sysbench
run of one workload at one thread count (or, on the user's server, two table sets).

The server's CPU of a run is counted over sysbench's event loop only (workloads/lua/
window.lua: not its start-up, connects or statement preparation), from the server's own
cgroup where one could be made (servers/cgroup.py, nanoseconds) or else /proc/PID/stat; for
a write workload the window stays open until the pages the run dirtied are flushed
(flushing.py), so the encryption InnoDB defers is charged to the run that caused it — or, in
the steady design (`write_window = "steady"`, steady.py), no flush is made: the servers are
warmed up until their write path levels off, and the loop's window then holds the page
writes its load causes.  TPS, latency and the other sysbench figures stay sysbench's own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.study import CellSkipped, Run
from encbench.engine.study_base import load_fields, record_cipher_speed
from encbench.machine import disk_window, placement
from encbench.machine.placement import UNPINNED, Placement
from encbench.proof import at_rest as proof
from encbench.servers import fscrypt, remote_cpu
from encbench.servers.cgroup import CpuCounter
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.shapes import IoCounter
from encbench.servers.target import Target, blame_the_server
from encbench.servers.variants import VARIANTS, EncryptionSpec
from encbench.studies.at_rest import cells, flushing, growth, run_proof, steady
from encbench.studies.at_rest.cpu_profile import CpuProfiler
from encbench.studies.at_rest.hosts import VariantHost
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.pair import ServerPair, check_iops_disk, shape_limits
from encbench.studies.at_rest.records import (
    CPU_NOT_MEASURED,
    CPU_WINDOW_LOOP,
    CPU_WINDOW_LOOP_FLUSH,
    CPU_WINDOW_LOOP_STEADY,
    CellKey,
    RunRecord,
)
from encbench.studies.at_rest.side import SideContext
from encbench.studies.at_rest.table_sets import TableSets
from encbench.workloads import sysbench

STATUS_COUNTERS = (
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_pages_read",
    "Innodb_pages_written",
    # The pages that went through the cipher: the cipher floor's input (report/floor.py)
    # and the per-run proof (run_proof.check_run).
    "Innodb_num_pages_decrypted",
    "Innodb_num_pages_encrypted",
    # How often a thread found no free page in the buffer pool and waited for the page
    # cleaner: beside a run that stalled, the cause named by the server's own count.
    "Innodb_buffer_pool_wait_free",
    # The pages the page cleaner wrote: in the steady state, what the run's window charged.
    steady.FLUSHED,
)
# The server's own counts of what a thread waited for, beside each run (RunRecord.waits):
# a run whose latency maximum stalled at a second or more is read against them.
WAIT_COUNTERS = (
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",  # milliseconds
    "Innodb_log_waits",
    "Innodb_deadlocks",
    "Innodb_data_fsyncs",
    "Binlog_commits",
    "Binlog_group_commits",
    "Binlog_group_commit_trigger_timeout",
    "Binlog_group_commit_trigger_lock_wait",
)


def _status_counters(status: dict[str, str]) -> dict[str, int]:
    return {k: int(status.get(k, 0)) for k in (*STATUS_COUNTERS, *WAIT_COUNTERS)}


def layer_unavailable(spec: EncryptionSpec) -> str | None:
    """Why this machine cannot give a configuration (its filesystem layer), or None."""
    return fscrypt.unavailable() if spec.fs else None


def _page_cache_mb(local: SandboxServer | None) -> float | None:
    """The page cache in the server's memory group now (None: no memory limit)."""
    cached = local.shaped.page_cache_bytes() if local and local.shaped else None
    return None if cached is None else round(cached / 2**20, 1)


def _no_server_cpu() -> float:
    return 0.0  # the window's server CPU is not read (and not recorded) without a process


@dataclass(frozen=True)
class _Opened:
    """A run about to be measured, and what was read before its window opened."""

    run: Run
    target: Target  # answers for the variant: status counters
    local: SandboxServer | None  # its own server on this host, if it has one
    counter: CpuCounter | None  # that server's CPU counter
    flushes: bool  # a write run on a local server: its window closes once flushed
    status: dict[str, int]
    dirty_before: int
    started_at: str
    cpus_allowed: str  # the server's Cpus_allowed_list, in a shaped cell ("" otherwise)
    device: str  # the block device of its data directory, where it is on this host ("")
    # Its own reads and writes, in a shape with an IOPS cap (None otherwise).
    io_counter: IoCounter | None = None
    # The steady design's write run: where its write path stood as the run began (None
    # otherwise), and the seconds of load that brought it back there just before.
    steady_start: steady.State | None = None
    ramp_s: float = 0.0


@dataclass(frozen=True)
class _Closed:
    """The server's CPU window of a run: the counter where it began, and where it ended
    (monotonic ns and the raw counter)."""

    start_counter: int
    end_ns: int
    end_counter: int
    flush_wait_s: float
    dirty_left: int


class MariaDbAtRest:
    """MariaDB's side of the at-rest study (side.py's Side)."""

    def __init__(self, context: SideContext) -> None:
        self.store, self.profile, self.progress = context.store, context.profile, context.progress
        # Its own section's rule (`[measure]`): the runner's is every kind's (KindsRule).
        self.rule = measure_options(self.profile)
        check_iops_disk(self.profile, self.store.path)
        self.host: VariantHost | None = None
        # Duet: both variants of a round at once (the runner calls measure_together).
        self.together = self.rule.sharing == "duet"
        self.cpus = placement.usable_cpus()
        self._devices: dict[Path, str] = {}
        # The steady-state write design (steady.py): whether each write cell's servers had
        # leveled off when its rounds began (after the last warm-up).
        self.steady = self.rule.write_window == "steady"
        self._leveled: dict[CellKey, bool] = {}
        self.profiler = (
            # One algorithm with profile_cpu (profile.parse): its core is calibrated once.
            CpuProfiler(
                self.store, self.profile.server.encryption_algorithm[0], self.rule.profile_cpu_s
            )
            if self.rule.profile_cpu
            else None
        )

    # -- once per run ----------------------------------------------------------------------
    def prepare(self) -> None:
        # A calibration encrypts nothing: no cipher to measure, no ceiling to predict.
        if not self.profile.calibration:
            record_cipher_speed(
                self.store,
                self.profile.server.encryption_algorithm,
                self.progress,
                repeats=self.profile.cipher_speed_repeats,
            )

    @contextmanager
    def setup(self, todo: Sequence[CellKey]) -> Iterator[VariantHost]:
        # The first configuration this machine can give (one of the filesystem layer is left
        # out without root: open_cell skips its cells).
        specs = [cells.configuration(cell, self.profile) for cell in todo]
        first = next((s for s in specs if layer_unavailable(s) is None), None)
        with self._open_host(first) as host:
            host.provision(self.progress.log)
            self.host = host
            try:
                yield host
            finally:
                self.host = None

    def _open_host(self, first: EncryptionSpec | None) -> VariantHost:
        """Where the variants live (hosts.py): two sandboxed servers, or two table sets on
        the profile's target."""
        if self.profile.target is not None:
            return TableSets(self.store, self.profile)
        return ServerPair(self.store, self.profile, first)

    @contextmanager
    def open_cell(self, cell: CellKey) -> Iterator[None]:
        spec = cells.configuration(cell, self.profile)
        why = self._host().unavailable(cell.regime) or layer_unavailable(spec)
        if why is not None:
            self._host().record.setdefault("skipped", {})[cell.slug] = why
            self.store.write_json("at-rest.json", self._host().record)
            raise CellSkipped(f"{cell.label}: {why}")
        self._host().use(spec, self.progress.log)
        self._host().use_shape(cells.shape(cell, self.profile), self.progress.log)
        self._host().configure(cell.regime, self.progress.log)
        yield
        # Only after the rounds ended normally (an exception skips it): the profile's extra
        # paired run must not disturb the measured ones.
        if self.profiler is not None:
            self.progress.status(f"{cell.label}: CPU profile (perf record)")
            self.profiler.profile_cell(cell, self._local_servers(), self._profiled_run(cell))

    def _profiled_run(self, cell: CellKey) -> Callable[[str, int, Path], int]:
        def run(variant: str, seconds: int, raw: Path) -> int:
            return self._sysbench(cell, variant, seconds, raw).transactions

        return run

    def _host(self) -> VariantHost:
        assert self.host is not None, "a cell is measured inside setup()"
        return self.host

    def _local_servers(self) -> dict[str, SandboxServer]:
        """Each variant's own local server (the profiler samples them); only a design with
        one per variant can be profiled (profile.check_target refuses profile_cpu else)."""
        found = {v: self._host().local_server(v) for v in VARIANTS}
        servers: dict[str, SandboxServer] = {v: s for v, s in found.items() if s is not None}
        assert len(servers) == len(VARIANTS), "profiling needs each variant's own server"
        return servers

    def _server(self, variant: str) -> SandboxServer:
        """A variant's own local server, where the measure path needs one."""
        server = self._host().local_server(variant)
        assert server is not None, f"{variant} has no local server"
        return server

    # -- one run ---------------------------------------------------------------------------
    def _invocation(
        self,
        cell: CellKey,
        variant: str,
        seconds: int,
        log: Path,
        cpu_counter: CpuCounter | None = None,
        where: Placement = UNPINNED,
    ) -> sysbench.Invocation:
        d = self.profile.data
        return sysbench.invocation(
            self._host().connection(variant),
            cell.workload,
            threads=cell.threads,
            time_s=seconds,
            log=log,
            options=sysbench.oltp_options(d.tables, d.table_size, self.rule.rand_type),
            cpu_counter=cpu_counter,
            prefix=where.client_prefix,
            env=self._host().client_env(),
            series=self.steady,
        )

    def _sysbench(
        self, cell: CellKey, variant: str, seconds: int, log: Path
    ) -> sysbench.SysbenchResult:
        with blame_the_server(self._host().target(variant)):
            return sysbench.run(self._invocation(cell, variant, seconds, log))

    def renew(self, cell: CellKey) -> bool:
        """Before each block (the engine's Renewing): both servers fresh, per the profile's
        `restart` (hosts.VariantHost.renew); True when they are (the runner then warms them
        up).  Pinned rounds pin both new servers at once: the one not measured first must
        not start its threads on sysbench's CPUs."""
        self.progress.status(f"{cell.label}: fresh servers for the next block")
        if not self._host().renew():
            return False
        if self.rule.sharing == "pinned":
            where = placement.placement(self.rule.sharing, 0, self.cpus)
            assert where.server is not None
            for server in self._local_servers().values():
                placement.pin(server.pid, where.server)
        return True

    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None:
        if self._levels(cell):
            self._level(cell, (variant,), raw, min_s=seconds)
            return
        self._sysbench(cell, variant, seconds, raw)

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None:
        """A duet's warm-up: a write cell's servers loaded at once, each on its half of the
        CPUs, until both have leveled off (the steady design); otherwise one after the
        other, as in sequential rounds."""
        if self._levels(cell):
            self._level(cell, VARIANTS, raw, min_s=seconds)
            return
        for variant in VARIANTS:
            self._sysbench(cell, variant, seconds, raw.with_name(f"{raw.stem}-{variant}.txt"))

    def _levels(self, cell: CellKey) -> bool:
        """Whether this cell's warm-up runs until the servers level off: a write workload in
        the steady design, on servers of encbench's own (a user's server is only read)."""
        return (
            self.steady
            and cell.workload in sysbench.WRITE_WORKLOADS
            and all(self._host().local_server(v) is not None for v in VARIANTS)
        )

    def _level(
        self, cell: CellKey, variants: Sequence[str], raw: Path, *, min_s: float
    ) -> steady.Leveling:
        """Load `variants`' servers (at once, each on its half of the CPUs, when there are
        two) in chunks until their write path levels off (steady.py); what it took is
        written to at-rest.json (`steady`), and the cell remembers whether it leveled."""
        servers = {v: self._server(v) for v in variants}
        d = self.profile.data
        for server in servers.values():
            with blame_the_server(server):
                growth.before_write_run(server, cell.workload, d.tables, d.table_size)
        wheres = {v: self._place(v, i) for i, v in enumerate(variants)}

        def chunk_raw(variant: str, chunk: int) -> Path:
            side = f"-{variant}" if len(variants) > 1 else ""
            return raw.with_name(f"{raw.stem}{side}-{chunk:03d}.txt")

        def load(chunk: int, seconds: int) -> None:
            self.progress.status(f"{cell.label}: warm-up to the steady state, {chunk * seconds} s")
            invocations = [
                self._invocation(cell, v, seconds, chunk_raw(v, chunk), where=wheres[v])
                for v in variants
            ]
            with contextlib.ExitStack() as blame:
                for server in servers.values():
                    blame.enter_context(blame_the_server(server))
                if len(invocations) == 1:
                    sysbench.run(invocations[0])
                else:
                    sysbench.run_together(invocations)

        def read() -> dict[str, steady.State]:
            return {v: steady.state(s.global_status()) for v, s in servers.items()}

        leveling = steady.warm_until_level(
            load,
            read,
            min_s=min_s,
            max_s=self.rule.steady_warmup_max_s,
            chunk_s=self.rule.steady_chunk_s,
        )
        self._leveled[cell] = leveling.level
        record = self._host().record.setdefault("steady", {}).setdefault(cell.slug, [])
        record.append({"variants": list(variants), **leveling.to_json()})
        self.store.write_json("at-rest.json", self._host().record)
        if not leveling.level:
            self.progress.log(
                f"{cell.label}: the write path did not level off within "
                f"{self.rule.steady_warmup_max_s} s of warm-up; measured anyway, its runs marked"
            )
        return leveling

    def _place(self, variant: str, position: int) -> Placement:
        """The CPUs of a variant's server and client at a position of the round (pins the
        server; unpinned in sequential rounds)."""
        where = placement.placement(self.rule.sharing, position, self.cpus)
        if where.server is not None:
            placement.pin(self._server(variant).pid, where.server)
        return where

    def _placement(self, run: Run) -> Placement:
        return self._place(run.variant, run.position)

    def measure(self, run: Run) -> RunRecord:
        where = self._placement(run)
        ramp_s = 0.0
        if self._levels(run.cell):
            # One server after the other: the one not measured idled meanwhile and its page
            # cleaner caught up, so it is brought back to its steady state first.
            ramp = self._level(
                run.cell,
                (run.variant,),
                run.raw.with_name(f"{run.raw.stem}-ramp.txt"),
                min_s=0,  # as soon as it has leveled: 2 × READINGS chunks at least
            )
            ramp_s = ramp.seconds
        opened = self._open(run, ramp_s)
        start = self._clocks(opened)
        with blame_the_server(opened.target):
            result = sysbench.run(self._window_invocation(opened, where))
        closed = self._close(opened, result)
        window = Window.between(start, self._clocks(opened, start))
        return self._record(opened, result, closed, window, where)

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]:
        """A duet round: both variants' runs at once, each server with its own client on its
        own half of the CPUs (machine/placement.py), inside one window of the machine's clocks."""
        wheres = [self._placement(run) for run in runs]
        opened = [self._open(run) for run in runs]
        start = self._clocks(opened[0])
        with contextlib.ExitStack() as blame:
            for o in opened:
                blame.enter_context(blame_the_server(o.target))
            results = sysbench.run_together(
                [self._window_invocation(o, w) for o, w in zip(opened, wheres, strict=True)]
            )
        closed = [self._close(o, r) for o, r in zip(opened, results, strict=True)]
        window = Window.between(start, self._clocks(opened[0], start))
        return [
            self._record(o, r, c, window, w)
            for o, r, c, w in zip(opened, results, closed, wheres, strict=True)
        ]

    def _clocks(self, opened: _Opened, start: Clocks | None = None) -> Clocks:
        """The machine's clocks at a window's opening (start None) or closing.  Without a
        local server (a table set on the user's server) the server's CPU is read over ssh
        where the user allows it, else not at all; this host's own CPU — encbench, sysbench,
        other processes — still is."""
        pids = start.pids if start is not None else None
        device = opened.device or None
        if opened.local is None or opened.counter is None:
            remote = self._host().remote_cpu()
            read_s = remote.read_s if remote else _no_server_cpu
            return Clocks.read(0, pids, server_cpu_s=read_s, device=device)
        ios = opened.io_counter.read if opened.io_counter is not None else None
        return Clocks.read(
            opened.local.pid,
            pids,
            server_cpu_s=opened.counter.read_s,
            device=device,
            server_ios=ios,
            # On images the servers' I/O goes through kernel threads (the loop devices'
            # workers; under the filesystem layer fscrypt's decryption, in its read queue):
            # the run's own work, not other load that would have its rounds measured again.
            kernel_threads=self._on_images(),
        )

    def _on_images(self) -> bool:
        host = self._host()
        return isinstance(host, ServerPair) and host.volumes is not None

    def _window_invocation(self, opened: _Opened, where: Placement) -> sysbench.Invocation:
        run = opened.run
        return self._invocation(run.cell, run.variant, run.seconds, run.raw, opened.counter, where)

    def _open(self, run: Run, ramp_s: float = 0.0) -> _Opened:
        """What is read before a run's window opens."""
        target = self._host().target(run.variant)
        local = self._host().local_server(run.variant)
        counter = local.cpu_counter if local is not None else None
        writes = run.cell.workload in sysbench.WRITE_WORKLOADS
        # Only on a server of our own: flushing and trimming change global variables, which
        # a user's server never gets from encbench (its runs record no flush wait).
        flushes = writes and local is not None and not self.steady
        if writes and local is not None and self.steady:
            # The steady state is left as it is: only the binary log is kept short.
            with blame_the_server(local):
                growth.purge_binary_logs(local)
        if flushes:
            assert local is not None and counter is not None
            # Outside the window: the warm-up's (or the last run's) rows and dirty pages are
            # not this run's.
            with blame_the_server(local):
                d = self.profile.data
                growth.before_write_run(local, run.cell.workload, d.tables, d.table_size)
                flushing.flush(local, counter)
        # After the flush (its writes are then on the device, their pages clean).
        self._host().settle(run.variant, run.cell.regime)
        with blame_the_server(target):
            full = target.global_status()
        status = _status_counters(full)
        return _Opened(
            run=run,
            target=target,
            local=local,
            counter=counter,
            flushes=flushes,
            status=status,
            dirty_before=flushing.dirty_pages(local) if flushes and local else 0,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            cpus_allowed=(
                proc.cpus_allowed(local.pid) if run.cell.shape and local is not None else ""
            ),
            device=self._device(target),
            # A duet's one window is read around both servers, so it cannot hold one
            # server's own I/O (and shapes, the only cap, are refused with duet).
            io_counter=(
                local.shaped.io_counter
                if local is not None and local.shaped is not None and not self.together
                else None
            ),
            steady_start=steady.state(full) if self._levels(run.cell) else None,
            ramp_s=ramp_s,
        )

    def _device(self, target: Target) -> str:
        """The data directory's block device, once per directory (a target's server on
        another host has none here)."""
        datadir = target.datadir
        if datadir is None:
            return ""
        if datadir not in self._devices:
            self._devices[datadir] = disk_window.device_of(datadir) or ""
        return self._devices[datadir]

    def _allowance(self, cell: CellKey) -> float | None:
        """The server's CPU in a shaped cell: its quota, else its CPUs (None: unshaped)."""
        spec = cells.shape(cell, self.profile)
        if spec is None:
            return None
        limits = shape_limits(spec)
        return limits.cpu_quota or float(len(limits.cpus))

    def _iops_cap(self, opened: _Opened) -> float | None:
        """The server's IOPS cap in a shaped cell where its I/O was counted (None else)."""
        spec = cells.shape(opened.run.cell, self.profile)
        if spec is None or spec.iops is None or opened.io_counter is None:
            return None
        return float(spec.iops)

    def _close(self, opened: _Opened, result: sysbench.SysbenchResult) -> _Closed | None:
        """Where the server's CPU window ends: the event loop's end, or for a write run once
        the pages it dirtied are flushed; None where no server CPU is read."""
        if opened.counter is None:
            return None
        loop = result.window
        assert loop is not None, "a run with a cpu_counter has its loop's window"
        if not opened.flushes or opened.local is None:
            return _Closed(loop.start_counter, loop.end_ns, loop.end_counter, 0.0, 0)
        with blame_the_server(opened.local):
            flushed = flushing.flush(opened.local, opened.counter, target=opened.dirty_before)
        return _Closed(
            loop.start_counter, flushed.end_ns, flushed.end_counter, flushed.wait_s,
            flushed.dirty_left,
        )  # fmt: skip

    def _record(
        self,
        opened: _Opened,
        result: sysbench.SysbenchResult,
        closed: _Closed | None,
        window: Window,
        where: Placement,
    ) -> RunRecord:
        run = opened.run
        with blame_the_server(opened.target):
            full = opened.target.global_status()
        after = _status_counters(full)
        delta = {k: after[k] - opened.status[k] for k in after}
        end = steady.state(full) if opened.steady_start is not None else None
        server_cpu_s = cpu_window_s = None
        cpu_source = opened.counter.source if opened.counter else CPU_NOT_MEASURED
        cpu_window = CPU_WINDOW_LOOP_FLUSH if opened.flushes else CPU_WINDOW_LOOP
        if end is not None:
            cpu_window = CPU_WINDOW_LOOP_STEADY
        if closed is not None and opened.counter is not None and result.window is not None:
            server_cpu_s = (closed.end_counter - closed.start_counter) * opened.counter.unit_s
            cpu_window_s = (closed.end_ns - result.window.start_ns) / 1e9
        remote = self._host().remote_cpu() if opened.local is None else None
        if remote is not None:
            # Read over ssh around the whole client run (remote_cpu.py): the window's clocks.
            server_cpu_s, cpu_window_s = window.server_cpu_s, window.wall_s
            cpu_source, cpu_window = remote.source, remote_cpu.WINDOW
        elif closed is None:
            cpu_window = ""
        server_cpus, client_cpus = where.describe()
        return RunRecord(
            **run.record_fields(opened.started_at, window.wall_s),
            **result.record_fields(),
            reconnects=result.reconnects,
            latency_max_ms=result.latency_max_ms,
            server_cpu_s=server_cpu_s,
            cpu_ms_per_txn=(
                1000.0 * server_cpu_s / result.transactions if server_cpu_s is not None else None
            ),
            **load_fields(window),
            client_cpu_s=window.client_cpu_s,
            bp_read_requests=delta["Innodb_buffer_pool_read_requests"],
            bp_reads=delta["Innodb_buffer_pool_reads"],
            pages_read=delta["Innodb_pages_read"],
            pages_written=delta["Innodb_pages_written"],
            raw_output=str(run.raw.relative_to(self.store.path)),
            pages_decrypted=delta["Innodb_num_pages_decrypted"],
            pages_encrypted=delta["Innodb_num_pages_encrypted"],
            bp_wait_free=delta["Innodb_buffer_pool_wait_free"],
            waits={k: delta[k] for k in WAIT_COUNTERS},
            cpu_source=cpu_source,
            cpu_window=cpu_window,
            cpu_window_s=cpu_window_s or 0.0,
            flush_wait_s=closed.flush_wait_s if closed else 0.0,
            dirty_pages_left=closed.dirty_left if closed else 0,
            sharing=self.rule.sharing,
            server_cpus=server_cpus,
            client_cpus=client_cpus,
            # The ramp back to the steady state is this run's own set-up: the budget's time.
            setup_s=run.setup_s + opened.ramp_s,
            shape_cpus_allowed=opened.cpus_allowed,
            usage=window.usage(
                server_cpu_s,
                cpu_window_s,
                opened.device,
                self._allowance(run.cell),
                iops_cap=self._iops_cap(opened),
            ),
            page_cache_mb=_page_cache_mb(opened.local),
            kernel_cpu_s=window.kernel_cpu_s,
            **self._steady_fields(opened, result, end),
        )

    def _steady_fields(
        self, opened: _Opened, result: sysbench.SysbenchResult, end: steady.State | None
    ) -> dict[str, Any]:
        """The steady design's figures of a run (records.py): its series and p99 for every
        run, and for a write run where its write path stood at its start and end."""
        if not self.steady:
            return {}
        writes = opened.run.cell.workload in sysbench.WRITE_WORKLOADS
        fields: dict[str, Any] = {
            "write_window": self.rule.write_window if writes else "",
            "latency_p99_ms": result.latency_p99_ms,
            "tps_per_s": [s.tps for s in result.per_second],
            "latency_p95_per_s": [s.p95_ms for s in result.per_second],
            "ramp_s": opened.ramp_s,
        }
        start = opened.steady_start
        if start is not None and end is not None:
            fields |= {
                "dirty_start": start.dirty,
                "dirty_end": end.dirty,
                "checkpoint_age_start": start.checkpoint_age,
                "checkpoint_age_end": end.checkpoint_age,
                "pages_flushed": end.flushed - start.flushed,
                "leveled": self._leveled.get(opened.run.cell),
            }
        return fields

    def prove(self, record: RunRecord) -> None:
        """Per run, the server's own counters (run_proof.py: check_run): a plain run
        decrypted and encrypted no page; an encrypted run that read pages from disk in the
        io-bound regime decrypted some, and one that wrote pages encrypted some.  In an A/A
        calibration both sides are plain.  On a user's server (two table sets on one
        server), a write workload's run is proven by its set's tablespaces instead."""
        writes = record.cell.workload in sysbench.WRITE_WORKLOADS
        host = self._host()
        if not host.dialect.page_counters:
            # MySQL and Percona Server count no pages through their cipher: their servers'
            # (or table sets') tablespaces were proven when made and after each restart, and
            # the report says the runs are not proven one by one.
            self._check_confined(record)
            return
        if isinstance(host, TableSets) and writes:
            # One server, two table sets, and no flush wait (no global variable is changed):
            # the page cleaner flushes one set's dirty pages during the other set's runs, so
            # the server-wide page counters speak for neither variant of a write workload
            # (a plain run encrypts the encrypted set's pages; an encrypted run may write
            # only the plain set's).  Its own set's tablespaces are proven instead, per run.
            proof.prove_tablespaces(
                host.target(record.variant),
                record.variant,
                self.profile.data.tables,
                proof_table=False,
                when=f"{record.cell.label} round {record.round}: after the run",
                sql=host.dialect.proof_sql,
            )
            return
        spec = cells.configuration(record.cell, self.profile)
        run_proof.check_run(
            record,
            writes,
            self.profile.calibration,
            shared_server=isinstance(host, TableSets),
            innodb_encrypts=spec.tde,
            control_encrypts=spec.control is not None,
        )
        self._check_confined(record)

    def _check_confined(self, record: RunRecord) -> None:
        shape = cells.shape(record.cell, self.profile)
        if shape is not None:
            run_proof.check_confined(record, shape_limits(shape).cpus)
