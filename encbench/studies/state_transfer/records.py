"""The state-transfer study's records of measured runs and the metrics it compares.

state-transfer.jsonl, schema SST_SCHEMA:
  1 — first version: one line per state transfer (SST) of one variant in one round.  Later,
      the same fields: cells of the raw pipelines (method `tar` or `xbstream`, no Galera),
      whose sync_s and transfer_s SstRecord describes.  Later still, optional fields of
      the donor's own service under a light load (donor_tps_before and the rest: None
      without donor_load_threads); `sync_less_pause_s` is derived, written beside them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results import schema
from encbench.results.schema import TIME_WORDS, Metric, RecordedRun, record
from encbench.studies.state_transfer.sstlog import PAUSE_STAGE

SST_SCHEMA = 1

SST_METRICS = (
    Metric("sync_s", "s", "lower_is_better", primary=True, more_less=TIME_WORDS),
    Metric("transfer_s", "s", "lower_is_better", more_less=TIME_WORDS),
    # mariabackup only: to Synced less the donor's fixed pause, which both variants sleep.
    Metric("sync_less_pause_s", "s", "lower_is_better", more_less=TIME_WORDS),
    # With a load on the donor only: what its own clients got while it served the transfer.
    Metric("donor_tps_during", "tps", "higher_is_better"),
)


@record
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
        aesni = {"on": "", "off": ", AES-NI off"}.get(
            self.aesni, ", AES-NI off (the 2017 study's mask)"
        )
        return f"{what}, {how}, {self.backup_threads} thread{plural}{aesni}"

    @property
    def slug(self) -> str:
        cipher = f"-{self.cipher.lower().replace('.', '')}" if self.cipher else ""
        aesni = {"on": "", "off": "-noaesni"}.get(self.aesni, "-seedmask")
        return f"{self.method}{cipher}-t{self.backup_threads}{aesni}"


@record
class SstRecord(RecordedRun):
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
    CELL: ClassVar[type[Any]] = SstCell
    FIGURES: ClassVar[tuple[str, ...]] = ("mib_per_s", "sync_less_pause_s")
    METRICS: ClassVar[tuple[Metric, ...]] = SST_METRICS

    cell: SstCell
    # round … wall_s: RecordedRun\'s; then this study\'s own
    sync_s: float
    transfer_s: float
    link_rx_bytes: int
    link_tx_bytes: int
    donor_cpu_s: float
    joiner_cpu_s: float
    # The per-run proof, from the joiner's and donor's SST logs: how the stream was carried
    # ("socat openssl", "socat plain", "stunnel", "rsync plain").
    donor_transport: str
    joiner_transport: str
    stages: dict[str, float]
    raw_output: str = ""
    # The donor's own service under the profile's light sysbench load (donor_load_threads;
    # None without it, and for the raw pipelines): its transactions per second and the
    # median of sysbench's per-second 95th-percentile latencies, over the whole seconds of
    # the load before the joiner started and of those inside the transfer (to Synced).
    donor_tps_before: float | None = None
    donor_tps_during: float | None = None
    donor_p95_before_ms: float | None = None
    donor_p95_during_ms: float | None = None

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.sync_s <= 0 or self.transfer_s < 0:
            raise self.impossible(f"synced in {self.sync_s:.3f} s, stream {self.transfer_s:.3f} s")

    def timed_window_s(self) -> float:
        return self.sync_s

    @property
    def mib_per_s(self) -> float:
        """What crossed the link, donor to joiner, over the donor's stream."""
        return schema.mib_per_s(self.link_rx_bytes, self.transfer_s)

    @property
    def sync_less_pause_s(self) -> float | None:
        """mariabackup: to Synced less the donor script's logged pause before it streams (a
        fixed 10 s, the same for both variants, that dilutes the ratio); None otherwise."""
        pause = self.stages.get(PAUSE_STAGE)
        if self.cell.method != "mariabackup" or pause is None:
            return None
        return self.sync_s - pause
