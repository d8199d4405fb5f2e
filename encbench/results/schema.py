"""The records of measured runs, one file per study (`<study>.jsonl`), and the metrics each
study compares.  The record type names its study, its file's schema version and its metrics,
so that the runner, the store and the report share one definition.

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
      (`shape_cpus_allowed`).
in-transit.jsonl, schema TRANSIT_SCHEMA:
  1 — first version (then transit.jsonl).
  2 — `rate_unit` names the unit of `rate`; bulk and dump rates are MiB/s (2^20 bytes), which
      version 1 called "MB/s".  Later, with default 0: `interference_pct`; `other_cpu_s` now
      leaves out every process of the run (tunnels, relays, the server), not only the tunnel.
      Later: `server_cpu_s` null where the server's CPU could not be read (a target without
      [target] ssh); older lines, all numbers, read as before.
operations.jsonl, schema OPERATIONS_SCHEMA:
  1 — first version: one line per timed operation of one variant in one round.  Later,
      with defaults (older lines read as before): the key-rotation cell's key_version_from,
      key_version and tables_at_key_version.
state-transfer.jsonl, schema SST_SCHEMA:
  1 — first version: one line per state transfer (SST) of one variant in one round.  Later,
      the same fields: cells of the raw pipelines (method `tar` or `xbstream`, no Galera),
      whose sync_s and transfer_s SstRecord describes.
replication.jsonl, schema REPLICATION_SCHEMA:
  1 — first version: one line per sysbench run against a 2-node cluster's first node, of
      one variant (plain cluster, or Galera's own TLS) in one round.
rejoin.jsonl, schema REJOIN_SCHEMA:
  1 — first version: one line per rejoin of node 2 (IST or SST) of one variant in one round.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from encbench.stats import Direction

RUNS_SCHEMA = 1
TRANSIT_SCHEMA = 2
OPERATIONS_SCHEMA = 1
SST_SCHEMA = 1
REPLICATION_SCHEMA = 1
REJOIN_SCHEMA = 1
# summary.json:
#   1 — one study at the top level, the in-transit part under "transit".
#   2 — every study under "studies": {"at-rest": {...}, "in-transit": {...}}.
SUMMARY_SCHEMA = 2


@dataclass(frozen=True)
class Metric:
    """One quantity compared between the variants of a cell: a field of the study's record."""

    name: str  # the record's attribute
    unit: str
    direction: Direction
    primary: bool = False  # the stopping rule and the headline verdict use this one
    # The verdict's words for a lower-is-better metric that went up / down: a time is
    # "longer" / "shorter" (stats.verdict).
    more_less: tuple[str, str] = ("higher", "lower")


AT_REST_METRICS = (
    Metric("tps", "txn/s", "higher_is_better", primary=True),
    Metric("qps", "queries/s", "higher_is_better"),
    Metric("latency_avg_ms", "ms", "lower_is_better"),
    Metric("latency_p95_ms", "ms", "lower_is_better"),
    Metric("cpu_ms_per_txn", "ms", "lower_is_better"),
)
# The measured windows of the server's CPU in an at-rest run (RunRecord.cpu_window).
CPU_WINDOW_LOOP = "event loop"  # sysbench's loop only: no connects, no statement preparation
CPU_WINDOW_LOOP_FLUSH = "event loop + flush"  # ... until the run's dirty pages were written
# RunRecord.cpu_source of a run whose server's CPU cannot be read (a target on another host).
CPU_NOT_MEASURED = "not measured: the server's process is not on this host"
TRANSIT_METRICS = (Metric("rate", "per s (rate_unit)", "higher_is_better", primary=True),)


def primary_metric(metrics: tuple[Metric, ...]) -> Metric:
    return next(m for m in metrics if m.primary)


@dataclass(frozen=True)
class CellKey:
    """One table row of the report: a workload in a regime at a thread count, and — only
    where the profile lists several (server.encryption_algorithm, server.encryption_scope) —
    the encrypted server's algorithm and scope.  "" there means the run's one configuration
    (at-rest.json's `encryption`), as in every record written before they were dimensions."""

    workload: str
    regime: str
    threads: int
    algorithm: str = ""
    scope: str = ""
    # The instance shape the servers were confined to (profile server.shapes); "" unconfined.
    shape: str = ""

    @property
    def configuration(self) -> str:
        """The encryption configuration in words, "" when it is the run's only one."""
        if not (self.algorithm or self.scope):
            return ""
        return f"{self.algorithm}, scope {self.scope}"

    @property
    def label(self) -> str:
        where = f" {self.algorithm} {self.scope}" if self.configuration else ""
        where += f" shape {self.shape}" if self.shape else ""
        return f"{self.workload} {self.regime}{where} {self.threads} thr"

    @property
    def slug(self) -> str:
        where = f"-{self.algorithm}-{self.scope}" if self.configuration else ""
        where += f"-shape-{self.shape}" if self.shape else ""
        return f"{self.workload}-{self.regime}{where}-t{self.threads}"


@dataclass(frozen=True)
class RunRecord:
    """One sysbench run of one variant in one round of an at-rest cell."""

    STUDY: ClassVar[str] = "at-rest"
    SCHEMA: ClassVar[int] = RUNS_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = AT_REST_METRICS

    cell: CellKey
    round: int
    variant: str
    position: int  # 0 = first of the round, 1 = second: the ABBA order, kept for audit
    session: str
    started_at: str
    wall_s: float
    tps: float
    qps: float
    transactions: int
    ignored_errors: int
    reconnects: int
    latency_avg_ms: float
    latency_p95_ms: float
    latency_max_ms: float
    # None: not measured (a target whose process is not on this host; cpu_source says why).
    server_cpu_s: float | None
    cpu_ms_per_txn: float | None
    harness_cpu_s: float
    bp_read_requests: int
    bp_reads: int
    pages_read: int
    pages_written: int
    raw_output: str
    # Added within schema 1 (older lines read as 0): sysbench's own CPU, other processes' CPU
    # and stolen CPU during the window: the load this run shared the machine with.
    client_cpu_s: float = 0.0
    other_cpu_s: float = 0.0
    steal_s: float = 0.0
    # Added within schema 1 (older lines read as 0, i.e. never re-measured): other processes'
    # and stolen CPU as a share of the machine (engine/clocks.py); a round above the profile's
    # interference_max_pct is measured again.
    interference_pct: float = 0.0
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
    # Added within schema 1: how the round shared the machine (placement.py; older lines were
    # all sequential) and the CPU lists of the run's server and client ("": unpinned).  In a
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

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.transactions <= 0 or self.tps <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"{self.transactions} transactions in {self.wall_s:.1f} s"
            )

    @property
    def hit_ratio(self) -> float:
        if self.bp_read_requests <= 0:
            return 1.0
        return 1.0 - self.bp_reads / self.bp_read_requests

    @property
    def pages_read_per_txn(self) -> float:
        return self.pages_read / self.transactions

    @property
    def pages_written_per_txn(self) -> float:
        return self.pages_written / self.transactions

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        # A run of the one configuration is written as before configurations were cells.
        data["cell"] = {k: v for k, v in data["cell"].items() if v != ""}
        data["schema"] = RUNS_SCHEMA
        data["hit_ratio"] = self.hit_ratio
        data["pages_read_per_txn"] = self.pages_read_per_txn
        data["pages_written_per_txn"] = self.pages_written_per_txn
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        if data.get("schema") != RUNS_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {RUNS_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = CellKey(**data["cell"])
        return cls(**fields)


# -- the in-transit study -----------------------------------------------------------------------


@dataclass(frozen=True)
class TransitCell:
    """One row of the in-transit tables: a test through one method (native TLS with a key type
    and cipher, stunnel, or an SSH tunnel with a cipher) at one distance and thread count.
    Its two variants are `plain` (plain TCP to the same server) and `encrypted`."""

    test: str  # connect | oltp_point_select | oltp_read_only | bulk | dump
    method: str  # tls | stunnel | ssh
    key_type: str  # the TLS chain's key type, or the SSH host key type
    cipher: str  # TLS 1.2 suite or SSH cipher; "" = the default
    rtt_ms: float
    threads: int
    resume: bool = False  # stunnel: TLS session resumption allowed (its client's default)

    @property
    def label(self) -> str:
        cipher = f" {self.cipher}" if self.cipher else ""
        cipher += " resumed" if self.resume else ""
        distance = f" rtt {self.rtt_ms:g} ms" if self.rtt_ms else ""
        return f"{self.test} {self.method} {self.key_type}{cipher}{distance} {self.threads} thr"

    @property
    def slug(self) -> str:
        cipher = self.cipher.replace("@", "_").replace("/", "_") or "default"
        cipher += "-resume" if self.resume else ""
        return (
            f"{self.test}-{self.method}-{self.key_type}-{cipher}-rtt{self.rtt_ms:g}-t{self.threads}"
        )

    @property
    def unit(self) -> str:
        return {"connect": "conn/s", "bulk": "MiB/s", "dump": "MiB/s"}.get(self.test, "txn/s")


@dataclass(frozen=True)
class TransitRecord:
    """One measured run of one variant in one round of an in-transit cell."""

    STUDY: ClassVar[str] = "in-transit"
    SCHEMA: ClassVar[int] = TRANSIT_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = TRANSIT_METRICS

    cell: TransitCell
    round: int
    variant: str  # plain | encrypted
    position: int
    session: str
    started_at: str
    wall_s: float
    rate: float  # per second, in rate_unit: connections, transactions or MiB (2^20 bytes)
    events: int  # connections, transactions, or result sets/dumps read
    bytes: int  # bytes read by the client (bulk, dump); 0 otherwise
    errors: int
    latency_avg_ms: float
    latency_p95_ms: float
    # None: not measured (a target whose process is not on this host and not reachable over
    # ssh; in-transit.json's cpu_measurement says why).
    server_cpu_s: float | None
    tunnel_cpu_s: float  # stunnel (both ends) or ssh + sshd with its session children
    client_cpu_s: float
    harness_cpu_s: float
    other_cpu_s: float
    steal_s: float
    tls_handshakes: int  # the server's Ssl_finished_accepts delta: the per-run proof
    # stunnel: handshakes its server side logged; ssh: channels its client's -v log opened
    tunnel_handshakes: int
    tunnel_resumed: int  # stunnel handshakes that resumed an earlier session
    session_cache_hits: int  # the server's Ssl_session_cache_hits delta: resumed TLS
    raw_output: str
    rate_unit: str = ""  # conn/s, txn/s or MiB/s: the cell's unit, named in the record
    interference_pct: float = 0.0  # as in the at-rest record (added within schema 2)

    def __post_init__(self) -> None:
        if not self.rate_unit:
            object.__setattr__(self, "rate_unit", self.cell.unit)
        if self.wall_s <= 0 or self.events <= 0 or self.rate <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"{self.events} events in {self.wall_s:.1f} s"
            )

    @property
    def server_cpu_ms_per_event(self) -> float | None:
        if self.server_cpu_s is None:
            return None
        return 1000.0 * self.server_cpu_s / self.events

    @property
    def encryption_cpu_ms_per_event(self) -> float | None:
        """Server plus tunnel CPU per event: where the encryption work lands on the server
        side, whichever method does it (None when the server's CPU was not measured)."""
        if self.server_cpu_s is None:
            return None
        return 1000.0 * (self.server_cpu_s + self.tunnel_cpu_s) / self.events

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = TRANSIT_SCHEMA
        data["server_cpu_ms_per_event"] = self.server_cpu_ms_per_event
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TransitRecord:
        if data.get("schema") != TRANSIT_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {TRANSIT_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = TransitCell(**data["cell"])
        return cls(**fields)


# -- the operations study -----------------------------------------------------------------------

# What an operation's `time` measures, per operation: seconds of the operation itself, except
# for encrypting existing data, whose paired cost is the foreground load's time per transaction
# (see OperationRecord).
OPERATION_UNITS = {"encrypt-existing": "ms/txn", "key-rotation": "ms/txn"}
TIME_WORDS = ("longer", "shorter")
OPERATIONS_METRICS = (
    Metric(
        "time", "s or ms/txn (time_unit)", "lower_is_better", primary=True, more_less=TIME_WORDS
    ),
)


@dataclass(frozen=True)
class OperationCell:
    """One row of the operations table: an operation, with its encryption threads where it
    has them (encrypting existing data; 0 for every other operation)."""

    operation: str  # startup | crash-recovery | encrypt-existing | key-rotation | backup | prepare
    threads: int = 0

    @property
    def label(self) -> str:
        title = OPERATION_TITLES.get(self.operation, self.operation)
        if self.threads:
            return f"{title}, {self.threads} encryption thread{'s' if self.threads > 1 else ''}"
        return title

    @property
    def slug(self) -> str:
        return f"{self.operation}-t{self.threads}" if self.threads else self.operation

    @property
    def unit(self) -> str:
        return OPERATION_UNITS.get(self.operation, "s")


OPERATION_TITLES = {
    "startup": "start-up",
    "crash-recovery": "crash recovery",
    "encrypt-existing": "encrypting existing data",
    "key-rotation": "key rotation",
    "backup": "mariadb-backup --backup",
    "prepare": "mariadb-backup --prepare",
}


@dataclass(frozen=True)
class OperationRecord:
    """One timed operation of one variant in one round of an operations cell.

    `time` is what the pair compares (lower is better): the operation's seconds (start-up and
    crash recovery until the server answers `SELECT 1`, a backup, a prepare).  Encrypting
    existing data has no plain counterpart that does the same work, so its pair is the
    foreground load: the same sysbench read/write run on the same server with the background
    encryption running (`encrypted`) or not (`plain`), and `time` is that load's milliseconds
    per transaction (1000 / TPS); the encryption's own time and rate are recorded beside it
    (`encryption_s`, `encrypted_bytes`), encrypted side only.  Key rotation is paired the same
    way: `encrypted` is the run whose window re-encrypts every page with a new key version,
    `plain` the same load on the same encrypted tables with no rotation; `encryption_s` and
    `encrypted_bytes` are then the re-encryption's, and the key versions prove it."""

    STUDY: ClassVar[str] = "operations"
    SCHEMA: ClassVar[int] = OPERATIONS_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = OPERATIONS_METRICS

    cell: OperationCell
    round: int
    variant: str
    position: int
    session: str
    started_at: str
    wall_s: float  # the whole run, its untimed set-up included (the cell's budget is real time)
    time: float  # in time_unit: the paired metric
    time_unit: str
    timed_s: float  # the measured window: the operation, or the foreground load
    harness_cpu_s: float
    other_cpu_s: float
    steal_s: float
    interference_pct: float
    # The per-run proof: sysbench tables encrypted per the server (INNODB_TABLESPACES_ENCRYPTION)
    # right after the operation, and how many there are.
    tables_encrypted: int
    tables: int
    # crash recovery: InnoDB's error log, checkpoint LSN to end of log, and pages to recover
    redo_bytes: int = 0
    pages_recovered: int = 0
    # encrypting existing data: the foreground load, and the encryption (encrypted side)
    foreground_tps: float = 0.0
    foreground_transactions: int = 0
    encryption_s: float = 0.0
    encrypted_bytes: int = 0
    # key rotation: the key plugin's version before and after the window, and the tables whose
    # every page is at that version afterwards (the per-run proof)
    key_version_from: int = 0
    key_version: int = 0
    tables_at_key_version: int = 0
    # backup: the bytes mariadb-backup wrote
    backup_bytes: int = 0
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.time <= 0 or self.timed_s <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"{self.time:g} {self.time_unit} in {self.timed_s:.3f} s"
            )

    @property
    def encryption_mib_per_s(self) -> float:
        """The background encryption's rate over the tablespaces it encrypted (0: none)."""
        if self.encryption_s <= 0:
            return 0.0
        return self.encrypted_bytes / 2**20 / self.encryption_s

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = OPERATIONS_SCHEMA
        data["encryption_mib_per_s"] = self.encryption_mib_per_s
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OperationRecord:
        if data.get("schema") != OPERATIONS_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {OPERATIONS_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = OperationCell(**data["cell"])
        return cls(**fields)


# -- the state-transfer study ---------------------------------------------------------------
SST_METRICS = (
    Metric("sync_s", "s", "lower_is_better", primary=True, more_less=TIME_WORDS),
    Metric("transfer_s", "s", "lower_is_better", more_less=TIME_WORDS),
)


@dataclass(frozen=True)
class SstCell:
    """One row of the state-transfer table: an SST method or a raw pipeline (its options'
    PIPELINES: no Galera), the encrypted stream's cipher choice (socat's: a key of
    SST_CIPHERS; rsync: "" = stunnel's own default), mariadb-backup's --parallel
    (rsync: its per-directory parallelism; tar: 1) and whether OpenSSL may use AES-NI in
    every process of the transfer ("off": its cluster's MASKS)."""

    method: str  # mariabackup | rsync | tar | xbstream | rsync-dir | rsync-file
    cipher: str = ""
    backup_threads: int = 1
    aesni: str = "on"  # on | off | seed-mask (records from before it existed: on)

    @property
    def label(self) -> str:
        if self.method == "rsync":
            how = "stunnel"
        elif self.cipher == "TLSv1.3":
            how = "socat TLS 1.3"
        else:
            how = f"socat TLS 1.2 {self.cipher}"
        # A raw pipeline (its options' PIPELINES; its names hold a "-" or are tar/xbstream).
        pipeline = self.method in ("tar", "xbstream") or self.method.startswith("rsync-")
        what = f"pipeline {self.method}" if pipeline else self.method
        plural = "s" if self.backup_threads > 1 else ""
        aesni = {"on": "", "off": ", AES-NI off"}.get(self.aesni, ", AES-NI off (the seed's mask)")
        return f"{what}, {how}, {self.backup_threads} thread{plural}{aesni}"

    @property
    def slug(self) -> str:
        cipher = f"-{self.cipher.lower().replace('.', '')}" if self.cipher else ""
        aesni = {"on": "", "off": "-noaesni"}.get(self.aesni, "-seedmask")
        return f"{self.method}{cipher}-t{self.backup_threads}{aesni}"


@dataclass(frozen=True)
class SstRecord:
    """One state transfer of one variant in one round: the joiner emptied and started, until
    it is Synced (wsrep_local_state 4).

    `sync_s` (the paired metric) runs from the joiner's start to Synced: it includes the
    joiner's own start-up and mariabackup's fixed 10 s pause on the donor before it streams
    (wsrep_sst_mariabackup: "Sleeping before data transfer"), the same for both variants.
    `transfer_s` is the donor's stream alone, from the SST script's own log lines (their
    millisecond timestamps); `stages` holds every stage the scripts logged, in seconds.
    Bytes are the joiner's veth counters over the run (`link_rx_bytes`: donor → joiner).
    CPU is each node's cgroup, which holds the SST scripts and the tools they start.

    A raw pipeline's run (method tar or xbstream: no Galera, no SST script): `sync_s` runs
    from the sender's start to the receiver's exit with every byte written and the target
    directory's filesystem synced (`sync -f`); `transfer_s` to the receiver's exit, before
    that sync; `stages` the sender's exit, the receiver's and the sync; the donor's and the
    joiner's CPU are the sender's and the receiver's processes (wait4's rusage)."""

    STUDY: ClassVar[str] = "state-transfer"
    SCHEMA: ClassVar[int] = SST_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = SST_METRICS

    cell: SstCell
    round: int
    variant: str
    position: int
    session: str
    started_at: str
    wall_s: float
    sync_s: float
    transfer_s: float
    link_rx_bytes: int
    link_tx_bytes: int
    donor_cpu_s: float
    joiner_cpu_s: float
    harness_cpu_s: float
    other_cpu_s: float
    steal_s: float
    interference_pct: float
    # The per-run proof, from the joiner's and donor's SST logs: how the stream was carried
    # ("socat openssl", "socat plain", "stunnel", "rsync plain").
    donor_transport: str
    joiner_transport: str
    stages: dict[str, float]
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.sync_s <= 0 or self.transfer_s < 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"synced in {self.sync_s:.3f} s, stream {self.transfer_s:.3f} s"
            )

    @property
    def mib_per_s(self) -> float:
        """What crossed the link, donor to joiner, over the donor's stream."""
        if self.transfer_s <= 0:
            return 0.0
        return self.link_rx_bytes / 2**20 / self.transfer_s

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = SST_SCHEMA
        data["mib_per_s"] = self.mib_per_s
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SstRecord:
        if data.get("schema") != SST_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {SST_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = SstCell(**data["cell"])
        return cls(**fields)


# -- the replication study ----------------------------------------------------------------------
REPLICATION_METRICS = (
    Metric("tps", "txn/s", "higher_is_better", primary=True),
    Metric("latency_avg_ms", "ms", "lower_is_better"),
    Metric("latency_p95_ms", "ms", "lower_is_better"),
    Metric("link_bytes_per_txn", "bytes", "lower_is_better"),
    Metric("cpu_ms_per_txn", "ms", "lower_is_better"),
)


@dataclass(frozen=True)
class ReplicationCell:
    """One row of the replication table: a sysbench write workload at a thread count, run
    against the first node of a 2-node cluster."""

    workload: str
    threads: int

    @property
    def label(self) -> str:
        return f"replication {self.workload} {self.threads} thr"

    @property
    def slug(self) -> str:
        return f"{self.workload}-t{self.threads}"


@dataclass(frozen=True)
class ReplicationRecord:
    """One sysbench run against node 1 of one variant's cluster: `plain` (no socket.ssl) or
    `encrypted` (Galera's own TLS, socket.ssl_key/cert/ca), each cluster on its own pair of
    emulated hosts.  Every commit is certified with, and replicated to, node 2 over the link.

    The run ends when node 2 has applied every write set of it (`apply_wait_s` after
    sysbench's end), so the CPU of both nodes (their cgroups) counts all the run's work.
    Bytes are node 2's veth counters over the run, both directions (`link_bytes`): write
    sets one way, certification and acknowledgements the other.  The per-run proof: both
    nodes' socket.ssl as their wsrep_provider_options report it, and a cluster of 2."""

    STUDY: ClassVar[str] = "replication"
    SCHEMA: ClassVar[int] = REPLICATION_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = REPLICATION_METRICS

    cell: ReplicationCell
    round: int
    variant: str
    position: int
    session: str
    started_at: str
    wall_s: float
    tps: float
    qps: float
    transactions: int
    ignored_errors: int
    latency_avg_ms: float
    latency_p95_ms: float
    apply_wait_s: float
    link_bytes: int
    node1_cpu_s: float
    node2_cpu_s: float
    harness_cpu_s: float
    other_cpu_s: float
    steal_s: float
    interference_pct: float
    # The per-run proof: "YES"/"NO" per node as wsrep_provider_options says socket.ssl is,
    # and wsrep_cluster_size on node 1 when the run ended.
    node1_ssl: str
    node2_ssl: str
    cluster_size: int
    # Both nodes of the other variant's cluster, idle meanwhile: what keeping it up cost.
    idle_cluster_cpu_s: float = 0.0
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.transactions <= 0 or self.tps <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"{self.transactions} transactions in {self.wall_s:.1f} s"
            )

    @property
    def link_bytes_per_txn(self) -> float:
        return self.link_bytes / self.transactions

    @property
    def cpu_ms_per_txn(self) -> float:
        """Both nodes' CPU per transaction: the replica's apply is part of a commit's cost."""
        return (self.node1_cpu_s + self.node2_cpu_s) * 1000 / self.transactions

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = REPLICATION_SCHEMA
        data["link_bytes_per_txn"] = self.link_bytes_per_txn
        data["cpu_ms_per_txn"] = self.cpu_ms_per_txn
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReplicationRecord:
        if data.get("schema") != REPLICATION_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {REPLICATION_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = ReplicationCell(**data["cell"])
        return cls(**fields)


# -- the rejoin study ---------------------------------------------------------------------------
REJOIN_METRICS = (
    Metric("sync_s", "s", "lower_is_better", primary=True, more_less=TIME_WORDS),
    Metric("link_bytes", "bytes", "lower_is_better"),
)
REJOIN_TRANSFERS = {"ist": "IST", "sst": "SST"}


@dataclass(frozen=True)
class RejoinCell:
    """One row of the rejoin table: node 2 rejoins by IST (its data kept) or by a full SST
    (its data directory emptied), after node 1 committed `missed` transactions without it."""

    transfer: str  # ist | sst
    missed: int

    @property
    def label(self) -> str:
        return f"rejoin by {REJOIN_TRANSFERS[self.transfer]}, {self.missed:,} transactions missed"

    @property
    def slug(self) -> str:
        return f"{self.transfer}-m{self.missed}"


@dataclass(frozen=True)
class RejoinRecord:
    """One rejoin of node 2 of one variant's cluster (plain, or socket.ssl) in one round:
    timed from node 2's start to Synced (`sync_s`).  Bytes are node 2's veth counters over
    that time, both directions; CPU node 1's over it and node 2's since its start (its cgroup
    is made at its start).  The per-run proof: node 2's own log says how it got the state
    (`transport`: "IST" when it received only write sets, "SST" when rsync copied the data
    directory first) and how many write sets came by IST (`ist_writesets`)."""

    STUDY: ClassVar[str] = "rejoin"
    SCHEMA: ClassVar[int] = REJOIN_SCHEMA
    METRICS: ClassVar[tuple[Metric, ...]] = REJOIN_METRICS

    cell: RejoinCell
    round: int
    variant: str
    position: int
    session: str
    started_at: str
    wall_s: float
    sync_s: float
    link_bytes: int
    node1_cpu_s: float
    node2_cpu_s: float
    harness_cpu_s: float
    other_cpu_s: float
    steal_s: float
    interference_pct: float
    transport: str
    ist_writesets: int
    raw_output: str = ""

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.sync_s <= 0:
            raise ValueError(
                f"impossible run for {self.cell.label} round {self.round} {self.variant}: "
                f"synced in {self.sync_s:.3f} s"
            )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = REJOIN_SCHEMA
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RejoinRecord:
        if data.get("schema") != REJOIN_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {REJOIN_SCHEMA}")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["cell"] = RejoinCell(**data["cell"])
        return cls(**fields)
