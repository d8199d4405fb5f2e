"""The state-transfer study's section of the profile (`[state_transfer]`): its methods,
their TLS choices and the cluster it measures them on."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from encbench.capacity import disk
from encbench.profiles.options import (
    CellBudget,
    DataSpec,
    MaxRounds,
    MinRounds,
    Rounds,
    RunSeconds,
    budgets_listed,
    counts_within,
    known,
)
from encbench.profiles.profile import Profile
from encbench.studies.definition import Settings

SECTION = "state_transfer"

# The state-transfer study's methods and, for mariabackup's socat stream, its TLS choices:
# TLS 1.3 with OpenSSL's default suite, or a TLS 1.2 suite (socat with OpenSSL 3 negotiates
# TLS 1.3, where `cipher=` is silently ignored, so a suite needs max-version=TLS1.2).
SstMethod = Literal["mariabackup", "rsync", "tar", "xbstream", "rsync-dir", "rsync-file"]
# The seed's raw pipelines, without Galera (studies/state_transfer/pipelines.py): the donor's
# data directory streamed by `tar` or by `mariadb-backup --stream=xbstream` over socat, or
# copied by rsync per directory or per file into an rsync daemon through socat, plain or
# socat's openssl address, into an empty directory on the joiner's host.
PIPELINES = ("tar", "xbstream", "rsync-dir", "rsync-file")
# The pipelines that read the donor's files as the seed did, with the server stopped.
STOPPED_DONOR = ("tar", "rsync-dir", "rsync-file")
# What a cell's `ciphers` choose for: every stream socat carries (rsync's stunnel has one).
SOCAT_METHODS = ("mariabackup", *PIPELINES)
# What a cell's `backup_threads` is for: mariadb-backup's --parallel, rsync's per-directory
# parallelism, the rsync pipelines' rsyncs at a time; tar reads one file at a time.
THREADED_METHODS = ("mariabackup", "rsync", "xbstream", "rsync-dir", "rsync-file")
MAX_SOCAT_BUFFER_KIB = 65536
SST_CIPHERS: dict[str, str] = {
    "TLSv1.3": "",
    "AES128-GCM": "ECDHE-RSA-AES128-GCM-SHA256",
    "AES256-GCM": "ECDHE-RSA-AES256-GCM-SHA384",
    "CHACHA20": "ECDHE-RSA-CHACHA20-POLY1305",
}
MAX_BACKUP_THREADS = 64
# The Galera SST methods, which a donor serves while it stays a live server: the only cells
# a load on the donor (donor_load_threads) measures.
SST_METHODS = ("mariabackup", "rsync")
DonorLoadWorkload = Literal["oltp_read_only", "oltp_point_select"]
MAX_DONOR_LOAD_THREADS = 64
# Whether OpenSSL may use AES-NI in every process of a state transfer: "off" starts the nodes
# (and so the SST scripts' socat, stunnel, openssl) and the raw pipelines' socat with
# OPENSSL_ia32cap = capacity's NO_AESNI_IA32CAP, which clears AES-NI and PCLMULQDQ and
# nothing else; "percona-2017-mask" with the mask of Percona's 2017 SST study as it wrote it,
# which OpenSSL 3 reads as also clearing CPUID leaf 7 (AVX2 and the rest: ChaCha20 slows too;
# capacity/measure.py).  Its first name, "seed-mask", is the value cells, slugs and results
# files carry, so profiles and results written with it still read; the new name maps to it.
AesNi = Literal["on", "off", "seed-mask", "percona-2017-mask"]
AESNI_ALIASES = {"percona-2017-mask": "seed-mask"}
# fio's seconds each way and iperf3's, measuring the disk's and the link's limits.
LIMITS_S = disk.SECONDS


class StateTransferSpec(Rounds):
    """The state-transfer study: a 2- or 3-node Galera cluster, each node on its own emulated
    host, and per round a fresh SST of the joiner, plain against encrypted
    (studies/state_transfer/)."""

    methods: Annotated[list[SstMethod], Field(min_length=1)] = ["mariabackup", "rsync"]
    # The streams socat carries (mariabackup's and the pipelines'): one cell per entry
    # (rsync's stunnel keeps its own default).
    ciphers: Annotated[list[str], Field(min_length=1), known(SST_CIPHERS, "SST cipher")] = [
        "TLSv1.3"
    ]
    backup_threads: Annotated[
        list[int], Field(min_length=1), counts_within(MAX_BACKUP_THREADS, "backup threads")
    ] = [1]
    # One cell per entry, every method: "off" as the 2017 study's "AES-NI off" runs (AesNi).
    aesni: Annotated[list[AesNi], Field(min_length=1)] = ["on"]
    nodes: int = 2
    # The donor's data when it is not [data]'s (which the at-rest study sizes for its
    # regimes): an SST copies it whole in every run, so a short profile may want less.
    tables: Annotated[int, Field(gt=0, le=1000)] | None = None
    table_size: Annotated[int, Field(gt=0)] | None = None
    # true: a machine without what the study needs (root, the Galera provider, the
    # methods' tools) skips its cells with the reason in the report, rather than refusing
    # the whole run — for a profile whose other studies run anywhere (quick).
    optional: bool = False
    # The emulated link between the hosts (tbf); none: as fast as the veth pair goes.
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    key_type: Literal["rsa2048", "rsa3072", "rsa4096"] = "rsa2048"
    # One SST takes what it takes: no warm-up, and run_s is only the ETA's estimate.
    warmup_s: Annotated[int, Field(ge=0, le=0)] = 0
    run_s: RunSeconds = 20
    min_rounds: MinRounds = 12
    max_rounds: MaxRounds = 40
    cell_budget_s: CellBudget = 300
    # A method's cells' budget when it is not cell_budget_s: a mariabackup SST round takes
    # about twice an rsync one (the donor's fixed pause), so one budget for both leaves
    # mariabackup without an interval or rsync with minutes it does not need.
    method_budget_s: dict[SstMethod, Annotated[float, Field(gt=0)]] = {}
    # The longest one state transfer may take before the run stops with the nodes' logs.
    sst_timeout_s: Annotated[float, Field(gt=0, le=86_400)] = 900
    # socat's -b in the raw pipelines (the SST scripts start their own socat): its 8 KiB
    # default held a plain stream to about half of what 1 MiB gave on this machine (#10).
    socat_buffer_kib: int = 1024
    # The donor's own service while it serves an SST: sysbench with this many threads on the
    # donor throughout every measured transfer and for donor_load_before_s before it (0: no
    # load).  Read-only, so that rsync's FLUSH TABLES WITH READ LOCK does not stop it.
    donor_load_threads: Annotated[int, Field(ge=0, le=MAX_DONOR_LOAD_THREADS)] = 0
    donor_load_workload: DonorLoadWorkload = "oltp_read_only"
    # sysbench's --rate (transactions per second over all threads; 0: as fast as it goes):
    # a light load leaves the transfer its share of the machine.
    donor_load_rate: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    donor_load_before_s: Annotated[int, Field(ge=2, le=600)] = 5
    # Both clusters' nodes encrypt their tablespaces (file_key_management, one generated key
    # file that the joiner is given too): a plain against an encrypted stream of data that
    # is encrypted at rest either way.
    donor_encrypted_at_rest: bool = False
    # Seconds fio takes each way (write, then read) for the disk's limit, and iperf3 for the
    # link's (measure_limits.py): a profile checking the mechanics (the tests') needs one.
    limits_s: Annotated[int, Field(ge=1, le=60)] = LIMITS_S

    def for_cell(self, cell: object) -> Self:
        """A cell of a method with a budget of its own (method_budget_s) runs by that."""
        method = getattr(cell, "method", None)
        budget = self.method_budget_s.get(method) if method in self.method_budget_s else None
        if budget is None:
            return self
        return self.model_copy(update={"cell_budget_s": budget})

    def data(self, default: DataSpec) -> DataSpec:
        """The donor's sysbench data: this section's size where it gives one, else
        `default` ([data]) for what it leaves out."""
        return DataSpec(
            tables=self.tables or default.tables,
            table_size=self.table_size or default.table_size,
        )

    @field_validator("socat_buffer_kib")
    @classmethod
    def buffer_in_range(cls, value: int) -> int:
        if not 1 <= value <= MAX_SOCAT_BUFFER_KIB:
            raise ValueError(
                f"a socat buffer of {value} KiB is out of range: use 1 to "
                f"{MAX_SOCAT_BUFFER_KIB} (KiB; socat's own default is 8)"
            )
        return value

    @field_validator("aesni", mode="after")
    @classmethod
    def aesni_by_one_name(cls, value: list[str]) -> list[str]:
        return [AESNI_ALIASES.get(v, v) for v in value]

    @field_validator("nodes")
    @classmethod
    def node_count(cls, value: int) -> int:
        if value not in (2, 3):
            raise ValueError(
                f"{value} nodes is out of range: use 2 (a donor and a joiner) or 3 (and a "
                "peer that stays in the cluster while the joiner rejoins)"
            )
        return value

    @model_validator(mode="after")
    def third_node_joins_by_sst(self) -> StateTransferSpec:
        if self.nodes == 3 and all(m in PIPELINES for m in self.methods):
            raise ValueError(
                "nodes = 3 needs an SST method (mariabackup or rsync): the raw pipelines "
                "run without Galera, so a third node would measure nothing; use nodes = 2"
            )
        return self

    @model_validator(mode="after")
    def budgets_of_listed_methods(self) -> StateTransferSpec:
        budgets_listed(self.method_budget_s, self.methods, "method_budget_s", "methods")
        return self

    @model_validator(mode="after")
    def donor_load_needs_an_sst(self) -> StateTransferSpec:
        if self.donor_load_threads and not any(m in SST_METHODS for m in self.methods):
            raise ValueError(
                "donor_load_threads measures the donor while it serves a Galera SST, and "
                "methods has none: add mariabackup or rsync, or set donor_load_threads = 0"
            )
        return self


def state_transfer_options(profile: Profile) -> StateTransferSpec:
    return profile.section(SECTION, StateTransferSpec)


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=StateTransferSpec, rule=state_transfer_options)
