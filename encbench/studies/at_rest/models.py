"""The at-rest study's part of summary.json, as typed models (built in summary.py)."""

from __future__ import annotations

from typing import Any

from pydantic import model_serializer

from encbench.report.bound import Bounded
from encbench.report.cell_summary import StudyPart
from encbench.report.models import Estimate, Model, Pair, Record, Spread
from encbench.servers.variants import configuration_label


class AtRestVariant(Model):
    tps: Spread
    # None where the kind's client does not give it (pgbench).
    qps: Spread | None = None
    latency_avg_ms: Spread
    latency_p95_ms: Spread | None = None
    # The steady design's (its runs keep the histogram and the series; None otherwise): the
    # 99th percentile and the maximum latency of each run.
    latency_p99_ms: Spread | None = None
    latency_worst_ms: float | None = None  # the largest maximum of any run
    # Runs whose maximum latency reached summary.STALL_MS, and the server's wait counters
    # summed over them (RunRecord.waits and bp_wait_free): what those runs waited for.
    stalled_runs: int | None = None
    stall_waits: dict[str, int] | None = None
    cpu_ms_per_txn: Spread | None = None  # None: not measured (a target on another host)
    # The server's CPU as a share of the instance (RunRecord.cpu_util_pct); None: not recorded.
    cpu_util_pct: Spread | None = None
    # The buffer pool's (InnoDB's); None on a kind without them.
    hit_ratio: Spread | None = None
    pages_read_per_txn: Spread | None = None
    pages_written_per_txn: Spread | None = None
    errors: int
    reconnects: int
    # The page cache in the server's memory group as each run ended (MiB; RunRecord): only
    # where the server had a memory limit.
    page_cache_mb: Spread | None = None
    # Kernel threads' CPU per run (RunRecord.kernel_cpu_s): only on images.
    kernel_cpu_s: Spread | None = None
    # A further kind's (PostgreSQL's; None otherwise): a write run's CHECKPOINT inside its
    # window (seconds), the largest share of the data its group's page cache held at a run's
    # end, and that group's memory limit (MiB).
    checkpoint_s: Spread | None = None
    cache_share_of_data: float | None = None
    memory_limit_mib: float | None = None

    @model_serializer(mode="wrap")
    def _utilisation_only_if_recorded(self, handler: Any) -> dict[str, Any]:
        # Runs from before encbench recorded their usage or page cache: the summary reads as
        # it did; a kind's figures only where it has them.
        data: dict[str, Any] = handler(self)
        for name in (
            "qps",
            "latency_p95_ms",
            "hit_ratio",
            "pages_read_per_txn",
            "pages_written_per_txn",
            "checkpoint_s",
            "cache_share_of_data",
            "memory_limit_mib",
            "cpu_util_pct",
            "page_cache_mb",
            "kernel_cpu_s",
            "latency_p99_ms",
            "latency_worst_ms",
            "stalled_runs",
            "stall_waits",
        ):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class CipherFloor(Model):
    """The cipher's own CPU per transaction beside the measured extra CPU (report/floor.py)."""

    cipher: str
    decrypt_us_per_page: float
    encrypt_us_per_page: float
    pages_decrypted_per_txn: float
    pages_encrypted_per_txn: float
    cipher_us_per_txn: float
    extra_cpu_us_per_txn: float  # encrypted − plain server CPU, mean over rounds
    extra_cpu_ci_us: tuple[float, float] | None
    explained: str


class CostProfile(Model):
    """Extra CPU by function group from one profiled paired run (report/cost_profile.py);
    or why it was not measured."""

    unavailable: str | None = None
    seconds: int = 0
    samples: tuple[int, int] = (0, 0)  # plain, encrypted
    pages_per_txn: float = 0.0
    extra_us_per_txn: dict[str, float] = {}
    extra_us_per_page: dict[str, float] | None = None
    words: str = ""
    reports: tuple[str, str] = ("", "")


class AtRestCell(Bounded):
    workload: str
    regime: str
    threads: int
    # The encrypted configuration where the profile made it a dimension; "" otherwise.
    algorithm: str = ""
    scope: str = ""
    shape: str = ""  # the instance shape (profile server.shapes); "" unconfined
    layer: str = ""  # "fs" or "tde+fs" (profile server.encryption_layer); "" TDE
    # "tables": the control side encrypted the tables (server.encryption_against); "" plain.
    against: str = ""
    kind: str = "mariadb"  # the kind of server (servers/server_kind.py)
    rounds: int  # rounds that count (in blocks or waiting for a partner)
    measured_s: float
    status: str
    rounds_rejected: int = 0  # measured again: interference above the profile's limit
    other_load_pct: float | None = None
    variants: Pair[AtRestVariant] | None = None
    comparisons: dict[str, Estimate] = {}  # by metric (RunRecord.METRICS); empty: unmeasured
    floor: CipherFloor | None = None
    cost_profile: CostProfile | None = None
    # Where the runs kept their per-second reports (the steady write design): each variant's
    # TPS second by second over its counted rounds in measuring order (the series plot).
    series: dict[str, list[float]] | None = None
    # The steady write design's warm-up: False when the servers' write path had not leveled
    # off when the cell's rounds began (steady.py); None where it was not checked.
    leveled: bool | None = None

    @model_serializer(mode="wrap")
    def _configuration_only_if_any(self, handler: Any) -> dict[str, Any]:
        # A run of one configuration writes summary.json as before configurations were cells.
        # Runs from before encbench recorded what bound them: no `bound`, as then.
        # Runs without per-second reports: no `series` and no `leveled`.
        data: dict[str, Any] = handler(self)
        # MariaDB's cells: no `kind`, as before kinds were.
        falsy_out = ("algorithm", "scope", "shape", "layer", "against", "bound")
        none_out = ("series", "leveled")
        return {
            k: v
            for k, v in data.items()
            if not (k in falsy_out and not v)
            and not (k in none_out and v is None)
            and (k, v) != ("kind", "mariadb")
        }

    @property
    def key(self) -> tuple[str, str, int, str]:
        """What identifies the cell across two result sets (`encbench compare`)."""
        return (self.workload, self.setting, self.threads, self.kind)

    @property
    def setting(self) -> str:
        """The regime, and the encrypted configuration where it is a dimension: what, beside
        the workload, a table of thread counts holds fixed."""
        setting = self.regime
        if self.algorithm or self.scope or self.layer:
            setting += ", " + configuration_label(
                self.algorithm, self.scope, self.layer or "tde", self.against
            )
        return setting + (f", shape {self.shape}" if self.shape else "")


class DiskReadsNotMeasured(Model):
    """A target whose buffer pool is too large for this run's data to be read from disk (the
    io-bound regime: target_regimes.py), from the pool the run read and the profile's data:
    what the report's first lines say, and what would measure it."""

    buffer_pool_mb: float
    data_mb: float  # both table sets, as estimated before loading
    data_over_pool: float  # io-bound needs the data at least this many times the pool
    largest_pool_mb: float | None  # the pool that would make it io-bound (None: too small)
    table_size: int  # data.table_size with which this pool would be io-bound
    sandbox: str  # the run that measures it on this machine's own servers


class PgServers(Model):
    """PostgreSQL's two servers as its side's record (pg-at-rest.json) has them."""

    postgresql_version: str | None = None
    scale: int
    server_user: str | None = None
    # pg_database_size of each server's benchmark database after loading.
    data_bytes: dict[str, int] | None = None
    # Per regime: shared_buffers, the memory groups' limit, and per server its confinement,
    # the blocks read in ahead (in memory) and its page cache at the start.
    regimes: dict[str, Record] | None = None
    # How the images were made, the kernel's cipher for the policy, the proof below the
    # filesystem and how the key left.
    filesystem: Record | None = None


class AtRestSummary(StudyPart[AtRestCell]):
    write_workload_state: str
    servers: Record | None
    crypto: Record | None
    # How the rounds shared the machine (machine/placement.py) and the CPU lists the runs' servers
    # and clients were pinned to (empty: unpinned).
    sharing: str = "sequential"
    server_cpus: list[str] = []
    client_cpus: list[str] = []
    # When both servers started afresh (MeasureSpec.restart, its options) and how many times they
    # did in all (at-rest.json; None: a target's server, never restarted by encbench).
    restart: str = "regime"
    server_starts: int | None = None
    # A target whose buffer pool held all of this data, so that no read came from disk
    # (None: sandboxed servers, or a pool small enough for io-bound).
    disk_reads_not_measured: DiskReadsNotMeasured | None = None
    # PostgreSQL's servers where its cells were asked for (None otherwise).
    postgresql: PgServers | None = None

    @model_serializer(mode="wrap")
    def _postgresql_only_if_asked(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("postgresql") is None:
            data.pop("postgresql", None)
        return data
