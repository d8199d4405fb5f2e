"""The state-transfer study's part of summary.json, as typed models (built in summary.py)."""

from __future__ import annotations

from encbench.report.cell_summary import GaleraCell, GaleraPart
from encbench.report.models import Model, Record, Sample


class SstVariant(Model):
    sync_s: Sample  # joiner started → Synced
    transfer_s: Sample  # the donor's stream, from the SST script's log
    link_mib: Sample  # donor → joiner, the joiner's veth counter
    mib_per_s: Sample  # link_mib over the donor's stream
    donor_cpu_s: Sample
    joiner_cpu_s: Sample
    stages: dict[str, Sample] = {}
    # mariabackup: to Synced less the donor's logged pause (None for other methods).
    sync_less_pause_s: Sample | None = None
    # With a load on the donor (donor_load_threads): its own service before the joiner
    # started and during the transfer (None without the load).
    donor_tps_before: Sample | None = None
    donor_tps_during: Sample | None = None
    donor_p95_before_ms: Sample | None = None
    donor_p95_during_ms: Sample | None = None


class SstLimit(Model):
    """One variant's MiB/s against the lowest of its measured limits
    (studies/state_transfer/limits.py)."""

    mib_per_s: float  # mean over rounds: the link's bytes over the donor's stream
    limits_mib_per_s: dict[str, float]  # "disk read", "disk write", "link", ["cipher"]
    resource: str  # the lowest limit
    limit_mib_per_s: float
    pct_of_limit: float
    binding: str  # the resource that bound it ("" when none: below AT_LIMIT_PCT)
    reading: str  # in words
    cipher: str = ""  # encrypted: the cipher and cores its limit stands for


class SstCellSummary(GaleraCell[SstVariant]):
    method: str
    cipher: str
    backup_threads: int
    aesni: str = "on"
    # Per variant ("plain", "encrypted"), where any limit was measured.
    limits: dict[str, SstLimit] = {}


class StateTransferSummary(GaleraPart[SstCellSummary]):
    # The measured limits as state-transfer.json records them (disk, link, cipher, cores).
    limits: Record | None = None
    # The raw pipelines' set-up as state-transfer.json records it (socat's buffer, the page
    # cache, the donor's state per pipeline); None without pipeline cells.
    pipelines: Record | None = None
    # The cluster's nodes (2, or 3 with a peer that stays in the cluster); None in a record
    # from before it was written, which always had 2.
    nodes: int | None = None
    # The load on the donor during each measured SST (workload, threads, rate_tps,
    # before_s); None without one.
    donor_load: Record | None = None
    # Both clusters' nodes encrypt their tablespaces, with what was proven; None when not.
    at_rest: Record | None = None
