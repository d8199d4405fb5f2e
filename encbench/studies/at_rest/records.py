"""The at-rest study's records of measured runs and the metrics it compares.

at-rest.jsonl, schema RUNS_SCHEMA:
  1 — first version (then runs.jsonl): one line per sysbench run of one variant in one round
      of one cell; client_cpu_s, other_cpu_s and steal_s were added later with default 0;
      later still (defaults keep older lines readable): interference_pct (other_cpu_s then
      began to leave out the idle peer server, which is this run's own process, not
      interference), pages_decrypted, pages_encrypted (the cipher's floor and the per-run
      proof), and where and over what the server's CPU was counted: cpu_source, cpu_window,
      cpu_window_s, flush_wait_s, dirty_pages_left; how the round shared the machine
      (`sharing`: sequential, pinned or duet) and the CPUs its server and client were pinned
      to (`server_cpus`, `client_cpus`: "" when unpinned); the cell's `algorithm` and
      `scope`, written only when the profile made them dimensions (several values); and (a
      target's table sets) server_cpu_s and cpu_ms_per_txn null when the server's CPU could
      not be read (CPU_NOT_MEASURED), or read over ssh (cpu_source "ssh /proc/PID/stat",
      cpu_window "client run (read over ssh before and after)"); the cell's instance `shape`
      (written only with server.shapes) and the CPUs its server was allowed
      (`shape_cpus_allowed`); and `usage`, what the run used of the machine (CPU, data
      device: results/usage.py); the cell's `layer` ("fs" or "tde+fs", written only for those:
      server.encryption_layer), a layer-"fs" cell without algorithm and scope; and, for
      the steady-state write design (`write_window`), the per-second series, p99 latency
      and where the write path stood at the run's start and end (see RunRecord); the cell's
      `against` ("tables": scope all against scope tables, server.encryption_against).
      Later, a further kind's runs beside MariaDB's (PostgreSQL's under the filesystem layer,
      driven by pgbench or sysbench's pgsql driver): the cell's `kind` (written only for a
      kind other than MariaDB); qps, latency_p95_ms, latency_max_ms and the buffer pool's
      counters null where the kind's client or server has none (pgbench; PostgreSQL counts
      no InnoDB pages); and the kind's own figures: checkpoint_s, blocks_read,
      blocks_written, wal_bytes, the server's memory group (group_cache_bytes,
      group_shmem_bytes, memory_limit_bytes), data_bytes and device.

pg-at-rest.jsonl (schema 2), where results directories kept PostgreSQL's runs before they
were this study's records: read as these records (EARLIER: from_pg_at_rest).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from encbench.results.schema import Earlier, Metric, RecordedRun, record
from encbench.servers.variants import configuration_label

RUNS_SCHEMA = 1
# The study's first kind (servers/server_kind.py): a cell that names no kind is its.
MARIADB = "mariadb"
MIB = 2**20

AT_REST_METRICS = (
    Metric("tps", "txn/s", "higher_is_better", primary=True, cannot_improve=True),
    Metric("qps", "queries/s", "higher_is_better", cannot_improve=True),
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("latency_p95_ms", "ms", "lower_is_better", cannot_improve=True),
    # Recorded by the steady-state write design only (None in other runs: not compared).
    Metric("latency_p99_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("cpu_ms_per_txn", "ms", "lower_is_better", cannot_improve=True),
    # The published reports' "CPU utilisation": lower when encryption lowers the throughput,
    # so a gain here is no anomaly.
    Metric("cpu_util_pct", "%", "lower_is_better"),
)
# The measured windows of the server's CPU in an at-rest run (RunRecord.cpu_window).
CPU_WINDOW_LOOP = "event loop"  # sysbench's loop only: no connects, no statement preparation
CPU_WINDOW_LOOP_FLUSH = "event loop + flush"  # ... until the run's dirty pages were written
# ... a write run's event loop in the steady state (steady.py): no flush, the cleaners as ever
CPU_WINDOW_LOOP_STEADY = "event loop, steady state"
# RunRecord.cpu_source of a run whose server's CPU cannot be read (a target on another host).
CPU_NOT_MEASURED = "not measured: the server's process is not on this host"


@record
class CellKey:
    """One table row of the report: a workload in a regime at a thread count, and — only
    where the profile lists several (server.encryption_algorithm, server.encryption_scope,
    server.encryption_layer) or another layer than TDE — the encrypted server's algorithm,
    scope and layer.  "" there means the run's one configuration (at-rest.json's
    `encryption`), as in every record written before they were dimensions; layer "" is TDE,
    as in every record written before layers existed, and a cell of layer "fs" has neither
    algorithm nor scope."""

    workload: str
    regime: str
    threads: int
    algorithm: str = ""
    scope: str = ""
    # The instance shape the servers were confined to (profile server.shapes); "" unconfined.
    shape: str = ""
    layer: str = ""  # "", "fs" or "tde+fs"
    # What the encrypted side was measured against: "" a plain server, "tables" a server of
    # scope tables (server.encryption_against).
    against: str = ""
    # The kind of server (servers/server_kind.py).  A further kind's cells are named as they
    # were when its cells were a study of their own (regime first, its clients): the raw
    # files' names and --resume find them again.
    kind: str = MARIADB

    @property
    def configuration(self) -> str:
        """The encryption configuration in words, "" when it is the run's only one."""
        if not (self.algorithm or self.scope or self.layer):
            return ""
        return configuration_label(self.algorithm, self.scope, self.layer or "tde", self.against)

    def _tags(self) -> list[str]:
        """What names the cell beyond workload, regime and threads."""
        tags = [self.algorithm, self.scope] if self.algorithm or self.scope else []
        tags += ["against", self.against] if self.against else []
        tags += [self.layer] if self.layer else []
        return tags + (["shape", self.shape] if self.shape else [])

    @property
    def label(self) -> str:
        if self.kind != MARIADB:
            return f"{self.regime} {self.workload} {self.threads} cl"
        where = "".join(f" {tag}" for tag in self._tags())
        return f"{self.workload} {self.regime}{where} {self.threads} thr"

    @property
    def slug(self) -> str:
        if self.kind != MARIADB:
            return f"{self.regime}-{self.workload}-c{self.threads}"
        where = "".join(f"-{tag.replace('+', '-')}" for tag in self._tags())
        return f"{self.workload}-{self.regime}{where}-t{self.threads}"


def from_pg_at_rest(line: dict[str, Any]) -> dict[str, Any]:
    """A line of pg-at-rest.jsonl (schema 2) as this study's: its cell a PostgreSQL cell of
    the filesystem layer, pgbench's failed transactions its ignored errors, its memory
    group's page cache in MiB; what pgbench and PostgreSQL do not give null."""
    cell = line["cell"]
    own = ("cell", "failed", "page_cache_bytes", "schema")
    transactions = line["transactions"]
    return {
        **{k: v for k, v in line.items() if k not in own},
        "schema": RUNS_SCHEMA,
        "cell": {
            "workload": cell["workload"],
            "regime": cell["regime"],
            "threads": cell["clients"],
            "layer": "fs",
            "kind": "postgresql",
        },
        "qps": None,
        "ignored_errors": line["failed"],
        "reconnects": 0,
        "latency_p95_ms": None,
        "latency_max_ms": None,
        "cpu_ms_per_txn": 1000.0 * line["server_cpu_s"] / transactions if transactions else None,
        "bp_read_requests": None,
        "bp_reads": None,
        "pages_read": None,
        "pages_written": None,
        "page_cache_mb": line["page_cache_bytes"] / MIB,
    }


@record
class RunRecord(RecordedRun):
    """One sysbench run of one variant in one round of an at-rest cell."""

    STUDY: ClassVar[str] = "at-rest"
    SCHEMA: ClassVar[int] = RUNS_SCHEMA
    CELL: ClassVar[type[Any]] = CellKey
    FIGURES: ClassVar[tuple[str, ...]] = (
        "hit_ratio",
        "pages_read_per_txn",
        "pages_written_per_txn",
    )
    METRICS: ClassVar[tuple[Metric, ...]] = AT_REST_METRICS
    EARLIER: ClassVar[tuple[Earlier, ...]] = (Earlier("pg-at-rest", 2, from_pg_at_rest),)

    cell: CellKey
    # round … wall_s: RecordedRun's (position: 0 = first of the round, 1 = second, the ABBA
    # order, kept for audit); then this study's own.  None: the kind's client does not give
    # it (pgbench: no queries, no percentiles, no maximum).
    tps: float
    qps: float | None
    transactions: int
    # Errors the client ignored and went on after (sysbench), or transactions that failed
    # (pgbench).
    ignored_errors: int
    reconnects: int
    latency_avg_ms: float
    latency_p95_ms: float | None
    latency_max_ms: float | None
    # None: not measured (a target whose process is not on this host; cpu_source says why).
    server_cpu_s: float | None
    cpu_ms_per_txn: float | None
    # The buffer pool's counters (InnoDB's); None on a kind without them.
    bp_read_requests: int | None
    bp_reads: int | None
    pages_read: int | None
    pages_written: int | None
    raw_output: str
    # Added within schema 1 (older lines read as 0): sysbench's own CPU during the window.
    client_cpu_s: float = 0.0
    # Added within schema 1: deltas of Innodb_num_pages_decrypted and
    # Innodb_num_pages_encrypted, the pages that went through the cipher (the cipher's floor
    # and the per-run proof; 0 in older lines, which were proven once per server).
    pages_decrypted: int = 0
    pages_encrypted: int = 0
    # Added within schema 1: where the server's CPU was read (servers/cgroup.py: "cgroup2
    # cpu.stat", "cgroup1 cpuacct.usage", "/proc/PID/stat"; "" in older lines: /proc/PID/stat
    # around the whole sysbench run), over which window (CPU_WINDOW_LOOP or
    # CPU_WINDOW_LOOP_FLUSH) and how long it was; for write workloads how long the window
    # stayed open after sysbench for the run's dirty pages to be flushed, and how many were
    # still dirty when it closed (0 unless the flush wait hit its bound).
    cpu_source: str = ""
    cpu_window: str = ""
    cpu_window_s: float = 0.0
    flush_wait_s: float = 0.0
    dirty_pages_left: int = 0
    # Added within schema 1: how the round shared the machine (machine/placement.py; older lines
    # were all sequential) and the CPU lists of the run's server and client ("": unpinned).  In a
    # duet, `position` is the half of the CPUs the run's side had (0 = the first).
    sharing: str = "sequential"
    server_cpus: str = ""
    client_cpus: str = ""
    # Added within schema 1: in a cell with an instance shape (cell.shape), the server's
    # Cpus_allowed_list (/proc/PID/status) when the run began: the per-run proof that it ran
    # confined to the shape's CPUs ("" without a shape).
    shape_cpus_allowed: str = ""
    # Added within schema 1 (older lines read as 0): the seconds spent just before this run on
    # its block's fresh servers and warm-up (measure.restart = "block"; on a block's first run
    # only).  Not measuring time, but the cell's time budget is real time: it is charged there.
    setup_s: float = 0.0
    # Added within schema 1 (None in older lines and without a memory limit): the page cache
    # charged to the server's memory group as the run ended, in MiB — what a memory budget
    # (io-bound on images) or a shape left the server of its data in the kernel's cache.
    page_cache_mb: float | None = None
    # Added within schema 1 (None in older lines and off images): kernel threads' CPU over the
    # window (engine/clocks.py) — the loop devices' workers and, under the filesystem layer,
    # fscrypt's decryption — counted as the run's work rather than as other load.
    kernel_cpu_s: float | None = None
    # Added within schema 1 (0 in older lines): the delta of Innodb_buffer_pool_wait_free,
    # the waits for a free page in the buffer pool (each up to a second, in
    # buf_LRU_get_free_block) — what a write run that stalled was waiting for, or not.
    bp_wait_free: int = 0
    # Added within schema 1 ({} in older lines): the deltas of the server's other wait
    # counters over the run (study.WAIT_COUNTERS: row locks and their milliseconds, the redo
    # log buffer, deadlocks, data fsyncs, the binary log's group commit) — beside a run that
    # stalled, which wait the server itself counted, or that none did.
    waits: dict[str, int] = field(default_factory=dict)
    # Added within schema 1 (defaults in older lines): the write design its run was
    # measured by ("flush" or "steady": measure.write_window; "" for a read workload's and
    # older runs); with the steady design's per-second reports, each second's TPS and p95
    # latency and the run's 99th percentile (sysbench's histogram); and, for a write run on
    # a server of encbench's own in that design, its dirty pages and checkpoint age (bytes)
    # at the start and end of the run, the pages flushed between
    # (Innodb_buffer_pool_pages_flushed), whether its servers had leveled off before the
    # cell's rounds (steady.py: None where not checked), and the seconds of load that
    # brought this run's server back to its steady state just before it (sequential rounds).
    write_window: str = ""
    latency_p99_ms: float | None = None
    tps_per_s: list[float] = field(default_factory=list)
    latency_p95_per_s: list[float] = field(default_factory=list)
    dirty_start: int | None = None
    dirty_end: int | None = None
    checkpoint_age_start: int | None = None
    checkpoint_age_end: int | None = None
    pages_flushed: int | None = None
    leveled: bool | None = None
    ramp_s: float = 0.0
    # A further kind's own figures (None and "" in MariaDB's runs).  A write run's CHECKPOINT
    # inside its window (seconds: PostgreSQL's pages it dirtied written, and on the fs side
    # encrypted, charged to it; None for a read run); the server's own counters over the run
    # (servers/postgresql/counters.py: blocks read from and written to the filesystem, WAL
    # bytes); its memory group at the run's end (servers/shapes.GroupMemory: its cache as
    # the kernel counts it, the shared memory in it; page_cache_mb is the difference) and
    # its limit; the data's size (pg_database_size after loading); the device mounted under
    # the server's directory during the run (its image's loop).
    checkpoint_s: float | None = None
    blocks_read: int | None = None
    blocks_written: int | None = None
    wal_bytes: int | None = None
    group_cache_bytes: int | None = None
    group_shmem_bytes: int | None = None
    memory_limit_bytes: int | None = None
    data_bytes: int | None = None
    device: str = ""

    def __post_init__(self) -> None:
        self.refuse_empty(self.transactions, self.tps, "transactions")

    @property
    def hit_ratio(self) -> float | None:
        if self.bp_read_requests is None or self.bp_reads is None:
            return None
        if self.bp_read_requests <= 0:
            return 1.0
        return 1.0 - self.bp_reads / self.bp_read_requests

    @property
    def pages_read_per_txn(self) -> float | None:
        return None if self.pages_read is None else self.pages_read / self.transactions

    @property
    def pages_written_per_txn(self) -> float | None:
        return None if self.pages_written is None else self.pages_written / self.transactions

    @property
    def cache_share_of_data(self) -> float | None:
        """What fraction of the data the server's group's page cache held at the run's end
        (None: no data size recorded)."""
        if not self.data_bytes or self.page_cache_mb is None:
            return None
        return self.page_cache_mb * MIB / self.data_bytes

    @property
    def cpu_util_pct(self) -> float | None:
        """The server's CPU over its window as a share of the instance's cores (an instance
        shape's allowance, else the machine's), as the published reports give CPU
        utilisation; None where the server's CPU or the run's usage was not recorded."""
        if self.server_cpu_s is None or self.cpu_window_s <= 0 or self.usage is None:
            return None
        cores = self.usage.server_cores_allowed or self.usage.cores
        return 100.0 * self.server_cpu_s / self.cpu_window_s / cores

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        # A run of the one configuration is written as before configurations were cells (and
        # MariaDB's as before kinds were).
        cell = data["cell"]
        data["cell"] = {k: v for k, v in cell.items() if v != "" and (k, v) != ("kind", MARIADB)}
        # A further kind's figures are written only where the kind gives them.
        for name in KIND_FIELDS:
            if data.get(name) in (None, ""):
                data.pop(name, None)
        return data


# RunRecord's fields of a further kind, left out of MariaDB's lines (as written before).
KIND_FIELDS = (
    "checkpoint_s",
    "blocks_read",
    "blocks_written",
    "wal_bytes",
    "group_cache_bytes",
    "group_shmem_bytes",
    "memory_limit_bytes",
    "data_bytes",
    "device",
)
