"""PostgreSQL's side of the at-rest study (side.py's Side): two sandboxed PostgreSQL servers,
each on its own loop-mounted ext4 image of the same size (servers/volume_pair.py), the
encrypted side's data directory under fscrypt; per cell, paired rounds of the same pgbench
against each.

Lifecycle: images made and mounted → per server: initdb, pgbench -i, the marker row, a fast
shutdown → the proof below the filesystem (raw images, names without the key) → per regime:
both servers started in memory groups of the regime's size (in memory: the data read into
shared_buffers) → per cell: warm-up, paired rounds until the interval is tight enough or the
budget ends. Every run is checked against its image's device and, io-bound, against the page
cache its group held.

Every run starts from clean buffers: a CHECKPOINT before it, outside its window, so that no
earlier run's (or cell's) dirty pages are written, and encrypted, during it. After a write
run the window stays open through another CHECKPOINT: PostgreSQL defers writing its data
pages, and fscrypt encrypts them only when they are written, so the work the run caused is
charged to its server CPU, whichever side runs next (as InnoDB's flush wait does for
MariaDB: studies/at_rest/flushing.py). TPS and latency stay pgbench's own.

Community PostgreSQL has no encryption at rest of its own: its users encrypt below it, with
the filesystem or the block device. This measures the filesystem's (fscrypt) cost to it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.study import CellSkipped, Run
from encbench.engine.study_base import load_fields
from encbench.machine import placement
from encbench.proof import at_rest as image_proof
from encbench.servers import fscrypt, images, keys, shapes
from encbench.servers.postgresql import counters as pg_counters
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.servers.target import blame_the_server
from encbench.servers.variants import VARIANTS
from encbench.servers.volume_pair import MIB, VolumePair
from encbench.studies.at_rest import postgresql_memory as memory
from encbench.studies.at_rest import postgresql_needs as needs
from encbench.studies.at_rest import postgresql_oltp as oltp
from encbench.studies.at_rest import postgresql_pgbench as pgbench
from encbench.studies.at_rest import postgresql_proof as proof
from encbench.studies.at_rest.postgresql_options import (
    OLTP_WRITES,
    is_oltp,
    pg_at_rest_options,
)
from encbench.studies.at_rest.records import CellKey, RunRecord
from encbench.studies.at_rest.side import SideContext
from encbench.workloads.pgbench_report import PgbenchResult
from encbench.workloads.sysbench import SysbenchResult

# Its servers' record (the images and their proof, each regime's memory): its own file, as
# when its cells were a study of their own.
RECORD_FILE = "pg-at-rest.json"
# An explicit CHECKPOINT is immediate (checkpoint_completion_target does not pace it): what a
# 2 s run dirties is written in seconds, even io-bound.
CHECKPOINT_TIMEOUT_S = 300.0
SIDES = {"plain": "plain (ext4)", "encrypted": "fs (ext4 + fscrypt)"}
LOAD_TIMEOUT_S = 3600.0


# Where and over what a run's server CPU is read (RunRecord.cpu_source, cpu_window).
CPU_SOURCE = "the postmaster and every backend, live or reaped"
CPU_WINDOW = "client run"
CPU_WINDOW_CHECKPOINT = "client run + CHECKPOINT"


def client_fields(got: PgbenchResult | SysbenchResult) -> dict[str, Any]:
    """The record's client figures from pgbench's report or sysbench's (pgsql driver): what
    pgbench does not give (queries, percentiles, a maximum) is None, its failed transactions
    the errors it went on after."""
    if isinstance(got, SysbenchResult):
        return {
            **got.record_fields(),
            "reconnects": got.reconnects,
            "latency_max_ms": got.latency_max_ms,
        }
    return {
        "tps": got.tps,
        "qps": None,
        "transactions": got.transactions,
        "ignored_errors": got.failed,
        "reconnects": 0,
        "latency_avg_ms": got.latency_avg_ms,
        "latency_p95_ms": None,
        "latency_max_ms": None,
    }


def side(variant: str) -> str:
    return SIDES.get(variant, variant)


def settings(shared_buffers_mb: int) -> dict[str, str]:
    """The server's memory, all of it in its group (no huge pages, which a memory group does
    not count), and a WAL bounded for its image."""
    return {
        **pg_sandbox.server_settings(shared_buffers_mb),
        "huge_pages": "off",
        "max_wal_size": f"{needs.MAX_WAL_MB}MB",
    }


class PgAtRest:
    """PostgreSQL's side of the at-rest study: its two servers alternate (never together)."""

    together = False

    def __init__(self, context: SideContext) -> None:
        self.store, self.profile, self.progress = context.store, context.profile, context.progress
        self.rule = pg_at_rest_options(self.profile)
        self.record: dict[str, Any] = self.store.read_json(RECORD_FILE) or {}
        self.volumes: VolumePair | None = None
        self.servers: dict[str, PgSandbox] = {}
        self.regime: str | None = None
        self.data_bytes: dict[str, int] = {}
        self._layout: shapes.Layout | None = None
        # The counters' statement for this PostgreSQL (both servers run one binary).
        self._counters_sql: str | None = None
        # Why this machine cannot measure them (no root, no PostgreSQL): each cell is left
        # out with it, and the study's other kinds go on.
        self.unavailable: str | None = None

    def prepare(self) -> None:
        """Nothing of its own: the filesystem's cipher is read when its images are made."""

    def log(self, line: str) -> None:
        self.progress.log(f"pg-at-rest: {line}")

    # -- the servers ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def setup(self, todo: Sequence[CellKey]) -> Iterator[dict[str, PgSandbox]]:
        self.unavailable = needs.unavailable(self.profile)
        if self.unavailable is not None:
            yield self.servers
            return
        with contextlib.ExitStack() as stack:
            self._provision(stack)
            try:
                yield self.servers
            finally:
                self.servers, self.regime = {}, None

    @property
    def layout(self) -> shapes.Layout:
        """Where the servers' memory groups go, found once."""
        if self._layout is None:
            found = shapes.detect(needs.CONTROLLERS)
            if isinstance(found, str):
                raise shapes.ShapeError(f"the servers' memory groups cannot be made: {found}")
            self._layout = found
        return self._layout

    def _provision(self, stack: contextlib.ExitStack) -> None:
        s = self.profile.server
        volumes = VolumePair(
            self.store.path / "pg-volumes",
            keys.private_dir(self.store.path),
            needs.image_bytes(self.profile),
            fscrypt.Policy(s.fscrypt_contents, s.fscrypt_filenames),
        )
        self.volumes = volumes
        # Last out: the images, once no server holds a file on them.
        stack.callback(self._close_volumes, volumes)
        volumes.mount(True, self.log)
        logs = self.store.path / "logs"
        logs.mkdir(exist_ok=True)
        for variant in VARIANTS:
            root = volumes.roots()[variant]
            server = PgSandbox(f"pg-at-rest-{variant}", root)
            stack.callback(server.destroy, keep_log_in=logs)
            self.servers[variant] = server
            # The server's user passes through to its data directory.
            volume = volumes.volumes[variant]
            for directory in (self.store.path, volumes.base, volume.mountpoint, root):
                pg_sandbox.make_enterable(directory, server.user)
        markers = {v: self._load(v, server) for v, server in self.servers.items()}
        self.record["filesystem"] = {
            **image_proof.prove_images(volumes, markers, side, self.log),
            **volumes.setup_record(),
        }
        first = self.servers["plain"]
        self.record.update(
            {
                "scale": self.rule.scale,
                "server_user": first.user.name,
                "data_bytes": self.data_bytes,
                "regimes": self.record.get("regimes", {}),
            }
        )
        self._save_record()

    def _load(self, variant: str, server: PgSandbox) -> bytes:
        """initdb, pgbench's tables at the profile's scale, their size, the marker row; the
        server is left stopped (a fast shutdown: a checkpoint writes every page)."""
        self.log(f"{side(variant)}: initdb, pgbench -i at scale {self.rule.scale}")
        server.initialize("host all all 127.0.0.1/32 reject")
        server.start(settings(self.rule.shared_buffers_mb))
        server.execute(f"CREATE DATABASE {pgbench.DATABASE}")
        proc.run(
            pgbench.init_argv(self.rule.scale),
            phase=f"pgbench -i ({side(variant)})",
            timeout_s=LOAD_TIMEOUT_S,
            stdout_path=self.store.path / "logs" / f"pgbench-init-{variant}.log",
            env=self._env(server),
        )
        if any(is_oltp(w) for w in self.rule.workloads):
            d = self.profile.data
            self.log(f"{side(variant)}: sysbench prepare, {d.tables} × {d.table_size:,} rows")
            oltp.prepare(
                server,
                pgbench.DATABASE,
                d.tables,
                d.table_size,
                self.store.path / "logs" / f"sysbench-prepare-{variant}.log",
                LOAD_TIMEOUT_S,
            )
            server.query("VACUUM ANALYZE", database=pgbench.DATABASE, timeout_s=LOAD_TIMEOUT_S)
        size = server.query(f"SELECT pg_database_size('{pgbench.DATABASE}')")[0][0]
        self.data_bytes[variant] = int(size)
        self.record["postgresql_version"] = server.version()
        marker = proof.write_marker(server)
        server.stop()
        return marker

    def _close_volumes(self, volumes: VolumePair) -> None:
        key = volumes.close(self.log)
        if key:
            self.record.setdefault("filesystem", {})["key"] = key
            self._save_record()
        self.volumes = None

    def _env(self, server: PgSandbox) -> dict[str, str]:
        return {**server.admin_env(), "PGUSER": pg_sandbox.ADMIN, "PGDATABASE": pgbench.DATABASE}

    def _save_record(self) -> None:
        self.store.write_json(RECORD_FILE, self.record)

    # -- a regime ------------------------------------------------------------------------------
    def _enter_regime(self, regime: str) -> None:
        """Both servers restarted in groups of the regime's memory, the page cache of their
        files emptied first; in memory, their data read into shared_buffers."""
        assert self.volumes is not None
        for server in self.servers.values():
            server.stop()
        data_mb = max(self.data_bytes.values()) / MIB
        buffers = self.rule.buffers_mb(regime, data_mb)
        limit = self.rule.memory_limit_mb(regime, data_mb)
        limits = shapes.memory_budget(limit, placement.usable_cpus())
        self.log(f"{regime}: shared_buffers {buffers:,} MB, memory groups of {limit:,} MB")
        found: dict[str, Any] = {
            "shared_buffers_mb": buffers,
            "memory_limit_mb": limit,
            "cgroup_version": self.layout.version,
            "servers": {},
        }
        for variant, server in self.servers.items():
            dropped = memory.drop_cached(self.volumes.roots()[variant])
            server.shape = (self.layout, limits)
            server.start(settings(buffers))
            assert server.shaped is not None
            shown: dict[str, Any] = {
                "files_dropped_from_cache": dropped,
                "confinement": server.shaped.confinement(server.pid),
            }
            if regime == "in-memory":
                shown["prewarmed_blocks"] = memory.prewarm(server)
            shown["page_cache_bytes_at_start"] = memory.held(server).page_cache_bytes
            found["servers"][variant] = shown
        self.record.setdefault("regimes", {})[regime] = found
        self._save_record()

    @contextlib.contextmanager
    def open_cell(self, cell: CellKey) -> Iterator[dict[str, PgSandbox]]:
        if self.unavailable is not None:
            raise CellSkipped(f"PostgreSQL cannot be measured here: {self.unavailable}")
        if cell.regime != self.regime:
            self.regime = None
            self._enter_regime(cell.regime)
            self.regime = cell.regime
        yield self.servers

    def renew(self, cell: CellKey) -> bool:
        return False  # its servers run through each regime

    # -- one run ---------------------------------------------------------------------------------
    def _client(
        self, cell: CellKey, variant: str, seconds: int, raw: Path
    ) -> PgbenchResult | SysbenchResult:
        server = self.servers[variant]
        with blame_the_server(server):
            if is_oltp(cell.workload):
                d = self.profile.data
                return oltp.run(
                    server,
                    pgbench.DATABASE,
                    cell,
                    d.tables,
                    d.table_size,
                    seconds,
                    raw,
                    self._env(server),
                )
            return pgbench.run(cell, seconds, self._env(server), raw)

    def warm_up(self, cell: CellKey, variant: str, seconds: int, raw: Path) -> None:
        self._client(cell, variant, seconds, raw)

    def warm_up_together(self, cell: CellKey, seconds: int, raw: Path) -> None:
        raise AssertionError("PostgreSQL's servers are never measured together")

    def measure_together(self, runs: Sequence[Run]) -> list[RunRecord]:
        raise AssertionError("PostgreSQL's servers are never measured together")

    def _loop(self, variant: str) -> str:
        assert self.volumes is not None
        return self.volumes.volumes[variant].loop

    def measure(self, run: Run) -> RunRecord:
        cell, variant, raw = run.cell, run.variant, run.raw
        server = self.servers[variant]
        device = Path(self._loop(variant)).name
        # Outside the window: what earlier runs dirtied is not this run's to write.
        self._checkpoint(server)
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        before = self._counters(server)
        # The servers' I/O goes through kernel threads (the loop devices' workers, fscrypt's
        # decryption): the run's own work, not other load (engine/clocks.py).
        start = Clocks.read(
            server.pid, None, server_cpu_s=server.cpu_seconds, device=device, kernel_threads=True
        )
        got = self._client(cell, variant, run.seconds, raw)
        # Inside it, after a write run: the pages it dirtied written (and, fs, encrypted).
        writes = cell.workload in pgbench.WRITES or cell.workload in OLTP_WRITES
        checkpoint_s = self._checkpoint(server) if writes else None
        end = Clocks.read(
            server.pid,
            start.pids,
            server_cpu_s=server.cpu_seconds,
            device=device,
            kernel_threads=True,
        )
        after = self._counters(server)  # its psql outside the CPU window
        window = Window.between(start, end)
        held = memory.held(server)
        assert self.volumes is not None and server.shaped is not None
        limit = server.shaped.limits.memory_bytes or 0
        return RunRecord(
            **run.record_fields(started_at, window.wall_s),
            **client_fields(got),
            server_cpu_s=window.server_cpu_s,
            cpu_ms_per_txn=1000.0 * window.server_cpu_s / got.transactions,
            bp_read_requests=None,
            bp_reads=None,
            pages_read=None,
            pages_written=None,
            raw_output=str(raw.relative_to(self.store.path)),
            client_cpu_s=window.client_cpu_s,
            **load_fields(window),
            cpu_source=CPU_SOURCE,
            cpu_window=CPU_WINDOW_CHECKPOINT if writes else CPU_WINDOW,
            cpu_window_s=window.wall_s,
            kernel_cpu_s=window.kernel_cpu_s,
            page_cache_mb=held.page_cache_bytes / MIB,
            checkpoint_s=checkpoint_s,
            blocks_read=after.blocks_read - before.blocks_read,
            blocks_written=after.blocks_written - before.blocks_written,
            wal_bytes=after.wal_bytes - before.wal_bytes,
            group_cache_bytes=held.cache_bytes,
            group_shmem_bytes=held.shmem_bytes,
            memory_limit_bytes=limit,
            data_bytes=self.data_bytes[variant],
            device=images.mount_source(self.volumes.volumes[variant].mountpoint) or "",
            usage=window.usage(window.server_cpu_s, device=device),
        )

    def _counters(self, server: PgSandbox) -> pg_counters.Snapshot:
        """The server's block and WAL counters (what `encbench estimate` multiplies by the
        units these runs give), read just outside the CPU window."""
        if self._counters_sql is None:
            version = int(server.query("SHOW server_version_num")[0][0])
            self._counters_sql = pg_counters.snapshot_sql(version)
        return pg_counters.parse(server.query(self._counters_sql)[0])

    def _checkpoint(self, server: PgSandbox) -> float:
        """CHECKPOINT: every dirty buffer written and its file synced; the seconds it took."""
        began = time.monotonic()
        server.query("CHECKPOINT", timeout_s=CHECKPOINT_TIMEOUT_S)
        return time.monotonic() - began

    def prove(self, record: RunRecord) -> None:
        proof.check_run(record, self._loop(record.variant))
