"""Profiles: what a study measures, as a TOML file validated field by field.

Built-in profiles live in encbench/profiles/*.toml; a user may pass a path instead.  Unknown
keys are refused (a typo must not silently fall back to a default), types are strict (`"4"` is
not 4, `true` is not 1, `nan` is no number), a list never names a value twice, and every error
is one line that names the key and the fix, e.g. `p.toml: measure.threads: 4 is listed twice;
list each value once`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from encbench.errors import BadInput
from encbench.net import netns, tunnels
from encbench.placement import Sharing
from encbench.servers import pki, shapes
from encbench.servers.target import Connection
from encbench.servers.variants import Algorithm, Scope
from encbench.workloads.sysbench import OLTP_WORKLOADS, WRITE_WORKLOADS

DEFAULT_PROFILE = "quick"
Regime = Literal["in-memory", "io-bound"]


# The sandboxed servers' max_connections (servers/variants.py renders it; a test keeps the
# two equal).  Some are kept for encbench's own status and proof queries, and for
# disconnects the server has not finished yet when a connect test opens the next one.
SERVER_MAX_CONNECTIONS = 600
HARNESS_CONNECTIONS = 10
MAX_CLIENT_THREADS = SERVER_MAX_CONNECTIONS - HARNESS_CONNECTIONS

# The name becomes a directory, results/{name}-{stamp}: nothing that could leave results/.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_CHARACTERS = "letters, digits, '.', '_' and '-' (starting with a letter or digit, at most 64)"


class Strict(BaseModel):
    # strict: TOML has types, and "4" or true where a number belongs is a mistake to name,
    # not a value to coerce; an int is still a float.  No nan or inf: no setting means them.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @field_validator("*")
    @classmethod
    def no_repeats(cls, value: Any) -> Any:
        """Every list is a set of choices: a value twice would measure a cell twice."""
        if isinstance(value, list):
            seen: list[Any] = []
            for item in value:
                if item in seen:
                    raise ValueError(f"{_toml_value(item)} is listed twice; list each value once")
                seen.append(item)
        return value


def _within_connections(threads: list[int]) -> list[int]:
    for n in threads:
        if n > MAX_CLIENT_THREADS:
            raise ValueError(
                f"{n} threads need {n} connections and the sandboxed server allows "
                f"{MAX_CLIENT_THREADS} client connections (max_connections = "
                f"{SERVER_MAX_CONNECTIONS}, {HARNESS_CONNECTIONS} kept for encbench); "
                f"use at most {MAX_CLIENT_THREADS}"
            )
    return threads


# One client connection per thread, all open at once on one server.
Threads = Annotated[
    list[Annotated[int, Field(gt=0)]], Field(min_length=1), AfterValidator(_within_connections)
]


class DataSpec(Strict):
    tables: Annotated[int, Field(gt=0, le=1000)] = 4
    table_size: Annotated[int, Field(gt=0)] = 100_000


SHAPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


class ShapeSpec(Strict):
    """One instance shape (`[[server.shapes]]`): the CPUs and memory the at-rest servers may
    use, enforced by cgroups (servers/shapes.py).  Every cell is measured once per shape."""

    name: str  # names its cells and report rows, e.g. "1cpu"
    cpus: Annotated[int, Field(gt=0, le=4096)]  # a cpuset of this many CPUs
    # CPUs' worth of CPU time per 100 ms period (CFS quota), e.g. 0.5 or 1.5; none: no quota.
    cpu_quota: float | None = None
    memory_mib: Annotated[int, Field(gt=0)] | None = None  # the server's memory limit

    @field_validator("name")
    @classmethod
    def short_name(cls, value: str) -> str:
        if not SHAPE_NAME.fullmatch(value):
            raise ValueError(
                f"{_toml_value(value)} cannot name a shape; use letters, digits, '.', '_' and "
                "'-' (starting with a letter or digit, at most 32), e.g. \"1cpu\""
            )
        return value

    @field_validator("cpu_quota")
    @classmethod
    def positive_quota(cls, value: float | None) -> float | None:
        if value is not None and value < shapes.MIN_CPU_QUOTA:
            raise ValueError(
                f"{value:g} is no CPU budget: give the CPUs' worth of time the server may use "
                f"per period, at least {shapes.MIN_CPU_QUOTA:g} (e.g. 1.5), or leave it out"
            )
        return value

    @property
    def memory_words(self) -> str:
        return f", {self.memory_mib:,} MiB" if self.memory_mib is not None else ""

    @property
    def words(self) -> str:
        """The shape as the report names it: "1cpu (1 CPU, quota 0.5 CPU, 512 MiB)"."""
        quota = f", quota {self.cpu_quota:g} CPU" if self.cpu_quota is not None else ""
        cpus = f"{self.cpus} CPU{'s' if self.cpus > 1 else ''}"
        return f"{self.name} ({cpus}{quota}{self.memory_words})"


class ServerSpec(Strict):
    """The encrypted server's configuration.  One value (`encryption_scope = "all"`) fixes it
    for the whole run, as always; a list (`encryption_scope = ["tables", "all"]`) makes it a
    dimension of the study: every cell is measured once per value (per combination, with
    both keys listed), each on a freshly provisioned and proven pair of servers."""

    encryption_algorithm: Annotated[list[Algorithm], Field(min_length=1)] = ["AES_CTR"]
    encryption_scope: Annotated[list[Scope], Field(min_length=1)] = ["tables"]
    # Both variants write a binary log (as a production server with replication or point-in-
    # time recovery does).  Scope `all` turns it on anyway: encrypting it must be the only
    # difference.  Not encrypted under scope `tables`, in either variant.
    binlog: bool = False
    # Instance shapes: a dimension of the at-rest study, each cell measured once per shape
    # with both servers confined to it (servers/shapes.py).  Empty: unconfined, as always.
    shapes: list[ShapeSpec] = []

    @field_validator("shapes")
    @classmethod
    def shape_fits_itself(cls, value: list[ShapeSpec]) -> list[ShapeSpec]:
        names: list[str] = []
        for shape in value:
            if shape.name in names:
                raise ValueError(
                    f"shape name {_toml_value(shape.name)} is used twice; give each shape "
                    "its own name"
                )
            names.append(shape.name)
            if shape.cpu_quota is not None and shape.cpu_quota > shape.cpus:
                raise ValueError(
                    f"shape {_toml_value(shape.name)}: cpu_quota {shape.cpu_quota:g} is more "
                    f"than its {shape.cpus} CPU(s) can run; give at most {shape.cpus}"
                )
        return value

    @field_validator("encryption_algorithm", "encryption_scope", mode="before")
    @classmethod
    def one_or_a_list(cls, value: Any, info: ValidationInfo) -> Any:
        """A single value is a list of one (old profiles keep working unchanged); an unknown
        value is named with the choices before the type check would call it a literal."""
        values = [value] if isinstance(value, str) else value
        if isinstance(values, list):
            choices = get_args(Algorithm if info.field_name == "encryption_algorithm" else Scope)
            what = (info.field_name or "").replace("_", " ")
            _all_known([v for v in values if isinstance(v, str)], choices, what)
        return values

    @property
    def dimensions(self) -> bool:
        """Whether the encrypted configuration varies between cells (more than one value)."""
        return len(self.encryption_algorithm) > 1 or len(self.encryption_scope) > 1

    @property
    def binary_log(self) -> bool:
        """Whether both variants write a binary log, in every configuration of the run (the
        same baseline for scope `tables` and `all`)."""
        return self.binlog or "all" in self.encryption_scope


class RegimeSpec(Strict):
    # in-memory: the buffer pool holds all data with this much headroom (× data size).
    in_memory_headroom: Annotated[float, Field(ge=1.2, le=10)] = 2.0
    # io-bound: the buffer pool is this fraction of the data size.
    io_bound_fraction: Annotated[float, Field(gt=0, le=0.5)] = 0.1
    # MariaDB rounds the buffer pool to whole chunks; below this it would not start.
    min_buffer_pool_mb: Annotated[int, Field(ge=6)] = 8


class Rounds(Strict):
    """Paired rounds and when a cell stops: shared by both studies (plan.StopRule)."""

    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 3
    run_s: Annotated[int, Field(ge=1, le=3600)] = 1
    # 12 rounds are 6 blocks: the fewest that give a 95% signed-rank interval (stats.py).
    # Fewer are allowed (the tests' tiny runs); such a cell reports no interval.
    min_rounds: Annotated[int, Field(ge=2, le=1000)] = 12
    max_rounds: Annotated[int, Field(ge=2, le=10000)] = 400
    target_halfwidth_pct: Annotated[float, Field(gt=0, le=50)] = 2.0
    cell_budget_s: Annotated[float, Field(gt=0)] = 85
    # A round whose runs shared the machine with more than this (other processes' and stolen
    # CPU, % of the machine) is measured again; see README "Interference" for the choice.
    interference_max_pct: Annotated[float, Field(gt=0, le=100)] = 10.0
    # "No difference beyond ±margin" needs the 90% interval within it (TOST).
    equivalence_margin_pct: Annotated[float, Field(gt=0, le=50)] = 2.0


class MeasureSpec(Rounds):
    workloads: Annotated[list[str], Field(min_length=1)] = ["oltp_read_only"]
    regimes: Annotated[list[Regime], Field(min_length=1)] = ["in-memory", "io-bound"]
    threads: Threads = [1, 4, 16, 64]
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    # Where the cost goes: after a cell's rounds, one extra paired run of profile_cpu_s
    # seconds with `perf record` on each server (profiling/); needs perf (linux-perf).
    profile_cpu: bool = False
    profile_cpu_s: Annotated[int, Field(ge=1, le=600)] = 5
    # How a round shares the machine (placement.py): one variant after the other, unpinned
    # ("sequential"); the same with servers and client on separate halves of the CPUs
    # ("pinned"); or both variants at once, each on its own half ("duet").
    sharing: Sharing = "sequential"
    # When both servers start afresh: before every block ("block"), so that what a pair of
    # processes has of its own (two identical servers differed by up to a fifth for as long
    # as both lived: README, Calibration) varies between blocks and the interval covers it;
    # or only when the regime, shape or configuration changes ("regime": cheaper, and blind
    # to that difference).  A target's server is never restarted.
    restart: Literal["block", "regime"] = "block"

    @field_validator("workloads")
    @classmethod
    def known_workloads(cls, value: list[str]) -> list[str]:
        return _all_known(value, OLTP_WORKLOADS, "workload")


def _all_known(values: list[str], choices: Iterable[str], what: str) -> list[str]:
    for name in values:
        if name not in choices:
            raise ValueError(f"unknown {what} {name!r}; choose from {', '.join(choices)}")
    return values


Study = Literal["at-rest", "in-transit", "operations", "state-transfer", "replication", "rejoin"]
TransitTest = Literal["connect", "oltp_point_select", "oltp_read_only", "bulk", "dump"]
TransitMethod = Literal["tls", "stunnel", "ssh"]


class TransitSpec(Rounds):
    """The in-transit study: plain TCP vs TLS (or a tunnel) against one sandboxed server."""

    tests: Annotated[list[TransitTest], Field(min_length=1)] = ["connect", "oltp_point_select"]
    # Native TLS: one cell group per server key type (the whole chain uses that type).
    key_types: Annotated[list[str], Field(min_length=1)] = ["rsa2048"]
    tls_version: Literal["TLSv1.2", "TLSv1.3"] = "TLSv1.3"
    # TLS 1.2 cipher suites for the bulk test, chosen on the server (ssl_cipher); empty = the
    # server's default.  Needs tls_version = "TLSv1.2" (TLS 1.3 suites ignore ssl_cipher).
    bulk_ciphers: list[str] = []
    methods: Annotated[list[TransitMethod], Field(min_length=1)] = ["tls"]
    tunnel_key_type: str = "rsa2048"
    # stunnel rows without and/or with TLS session resumption (its client resumes by default;
    # MariaDB's clients never do, so `false` is the like-for-like comparison).
    stunnel_resume: Annotated[list[bool], Field(min_length=1)] = [False]
    ssh_ciphers: Annotated[list[str], Field(min_length=1)] = ["aes128-gcm@openssh.com"]
    connect_threads: Threads = [1, 4]
    query_threads: Threads = [1, 4, 16]
    # Round-trip times for the connection test; 0 = loopback on one host.
    rtt_ms: Annotated[list[float], Field(min_length=1)] = [0]
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    table_size: Annotated[int, Field(gt=0)] = 10_000
    bulk_mb: Annotated[int, Field(gt=0, le=8192)] = 128
    # Shorter than at rest: a cell is one path, and a study has many.
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 1
    cell_budget_s: Annotated[float, Field(gt=0)] = 30

    @field_validator("key_types")
    @classmethod
    def known_key_types(cls, value: list[str]) -> list[str]:
        return _all_known(value, pki.KEY_TYPES, "TLS key type")

    @field_validator("tunnel_key_type")
    @classmethod
    def known_tunnel_key(cls, value: str) -> str:
        _all_known([value], tunnels.SSH_KEY_TYPES, "tunnel key type")
        return value

    @field_validator("ssh_ciphers")
    @classmethod
    def known_ssh_ciphers(cls, value: list[str]) -> list[str]:
        return _all_known(value, tunnels.SSH_CIPHERS, "SSH cipher")

    @field_validator("rtt_ms")
    @classmethod
    def delays_in_range(cls, value: list[float]) -> list[float]:
        for rtt in value:
            if not 0 <= rtt <= netns.MAX_DELAY_MS:
                raise ValueError(
                    f"round-trip time {rtt:g} ms is out of range; use 0 to "
                    f"{netns.MAX_DELAY_MS:g} ms"
                )
        return value


class TargetSpec(Strict):
    """A server encbench did not start (`[target]`, or `--target mysql://user@host:port/`).
    No password here: it comes from MYSQL_PWD or --defaults-extra-file (servers/user_server)."""

    host: str = ""
    port: Annotated[int, Field(gt=0, lt=65536)] = 3306
    socket: str = ""  # a unix socket path instead of host and port
    user: Annotated[str, Field(min_length=1)]
    ssl_ca: str = ""  # the CA that signed the server's certificate (in-transit TLS)
    ssl_cert: str = ""  # a client certificate and its key, where the server asks for one
    ssl_key: str = ""
    # An option file whose [client] section holds the password (--defaults-extra-file); the
    # password itself is never in a profile.
    defaults_extra_file: str = ""
    # Leave encbench's databases on the server after the run (--keep): to look at them.
    keep: bool = False
    # Where the user allows it: the server's host over ssh ("user@host", as `ssh` takes it;
    # BatchMode, so a key or agent must let it in), whose /proc/PID/stat gives the server's
    # CPU (servers/remote_cpu.py); ssh_config: a file for `ssh -F` (port, key, known hosts).
    ssh: str = ""
    ssh_config: str = ""

    @field_validator("host")
    @classmethod
    def plain_host(cls, value: str) -> str:
        if any(c.isspace() or c in "/@?#" for c in value):
            raise ValueError(f"{_toml_value(value)} is not a host name; give a name or an address")
        return value

    @field_validator("ssh")
    @classmethod
    def ssh_destination(cls, value: str) -> str:
        if value.startswith("-") or any(c.isspace() for c in value):
            raise ValueError(f"{_toml_value(value)} is not an ssh destination; give user@host")
        return value

    def connection(self) -> Connection:
        """Where its clients connect and as whom (the database is chosen later)."""
        if self.socket:
            return Connection.unix(Path(self.socket), self.user, "")
        return Connection.tcp(self.host, self.port, self.user, "")


Operation = Literal[
    "startup", "crash-recovery", "encrypt-existing", "key-rotation", "backup", "prepare"
]
# innodb_encryption_threads takes 0 to 255; 0 would never encrypt anything.
MAX_ENCRYPTION_THREADS = 255


class OperationsSpec(Rounds):
    """The operations study: timed operations of a plain and an encrypted server with the
    profile's data (studies/operations/)."""

    operations: Annotated[list[str], Field(min_length=1)] = [
        "startup",
        "crash-recovery",
        "encrypt-existing",
        "backup",
        "prepare",
    ]
    # innodb_encryption_threads while existing tables are encrypted: one cell each.
    encryption_threads: Annotated[list[int], Field(min_length=1)] = [1, 2, 4]
    # The background encryption's page budget (innodb_encryption_rotation_iops).  MariaDB's
    # default, 100 pages/s, would measure that throttle (1.6 MiB/s) rather than the cipher.
    rotation_iops: Annotated[int, Field(ge=1, le=1_000_000_000)] = 100_000
    # sysbench threads of the write load before a crash and of the foreground load while
    # existing tables are encrypted.
    load_threads: Annotated[int, Field(gt=0, le=MAX_CLIENT_THREADS)] = 4
    crash_load_s: Annotated[int, Field(ge=1, le=3600)] = 5
    # The plain side's window of the foreground load (the encrypted side's is the encryption
    # pass): about as long as that pass, so that both rates cover like stretches of load.
    foreground_s: Annotated[int, Field(ge=1, le=3600)] = 2
    # An operation takes what it takes: no warm-up, and run_s is only the ETA's estimate.
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 0
    run_s: Annotated[int, Field(ge=1, le=3600)] = 5
    cell_budget_s: Annotated[float, Field(gt=0)] = 150

    @field_validator("operations")
    @classmethod
    def known_operations(cls, value: list[str]) -> list[str]:
        return _all_known(value, get_args(Operation), "operation")

    @field_validator("encryption_threads")
    @classmethod
    def threads_in_range(cls, value: list[int]) -> list[int]:
        for n in value:
            if not 1 <= n <= MAX_ENCRYPTION_THREADS:
                raise ValueError(
                    f"{n} encryption threads is out of range: innodb_encryption_threads takes "
                    f"1 to {MAX_ENCRYPTION_THREADS} (0 would never encrypt); use 1 to "
                    f"{MAX_ENCRYPTION_THREADS}"
                )
        return value


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
# Whether OpenSSL may use AES-NI in every process of a state transfer: "off" starts the nodes
# (and so the SST scripts' socat, stunnel, openssl) and the raw pipelines' socat with
# OPENSSL_ia32cap = capacity's NO_AESNI_IA32CAP, which clears AES-NI and PCLMULQDQ and
# nothing else; "seed-mask" with the seed's mask as it wrote it, which OpenSSL 3 reads as
# also clearing CPUID leaf 7 (AVX2 and the rest: ChaCha20 slows too; capacity/measure.py).
AesNi = Literal["on", "off", "seed-mask"]


class StateTransferSpec(Rounds):
    """The state-transfer study: a 2- or 3-node Galera cluster, each node on its own emulated
    host, and per round a fresh SST of the joiner, plain against encrypted
    (studies/state_transfer/)."""

    methods: Annotated[list[SstMethod], Field(min_length=1)] = ["mariabackup", "rsync"]
    # The streams socat carries (mariabackup's and the pipelines'): one cell per entry
    # (rsync's stunnel keeps its own default).
    ciphers: Annotated[list[str], Field(min_length=1)] = ["TLSv1.3"]
    backup_threads: Annotated[list[int], Field(min_length=1)] = [1]
    # One cell per entry, every method: "off" as the seed's "AES-NI off" runs (AesNi above).
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
    run_s: Annotated[int, Field(ge=1, le=3600)] = 20
    min_rounds: Annotated[int, Field(ge=2, le=1000)] = 12
    max_rounds: Annotated[int, Field(ge=2, le=10000)] = 40
    cell_budget_s: Annotated[float, Field(gt=0)] = 300
    # The longest one state transfer may take before the run stops with the nodes' logs.
    sst_timeout_s: Annotated[float, Field(gt=0, le=86_400)] = 900
    # socat's -b in the raw pipelines (the SST scripts start their own socat): its 8 KiB
    # default held a plain stream to about half of what 1 MiB gave on this machine (#10).
    socat_buffer_kib: int = 1024

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

    @field_validator("ciphers")
    @classmethod
    def known_ciphers(cls, value: list[str]) -> list[str]:
        return _all_known(value, SST_CIPHERS, "SST cipher")

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

    @field_validator("backup_threads")
    @classmethod
    def threads_in_range(cls, value: list[int]) -> list[int]:
        for n in value:
            if not 1 <= n <= MAX_BACKUP_THREADS:
                raise ValueError(
                    f"{n} backup threads is out of range: use 1 to {MAX_BACKUP_THREADS}"
                )
        return value


# The replication study's workloads: a read-only one replicates nothing.
REPLICATION_WORKLOADS = tuple(w for w in OLTP_WORKLOADS if w in WRITE_WORKLOADS)


class ReplicationSpec(Rounds):
    """The replication study: sysbench write workloads against node 1 of a 2-node Galera
    cluster, a plain cluster against one with Galera's own TLS (socket.ssl_*), both up at
    once on their own emulated hosts (studies/replication/)."""

    workloads: Annotated[list[str], Field(min_length=1)] = ["oltp_write_only", "oltp_read_write"]
    threads: Threads = [4]
    key_type: Literal["rsa2048", "rsa3072", "rsa4096"] = "rsa2048"
    # The emulated link between each cluster's hosts (tbf); none: as fast as the veth goes.
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 5
    run_s: Annotated[int, Field(ge=1, le=3600)] = 20
    cell_budget_s: Annotated[float, Field(gt=0)] = 240

    @field_validator("workloads")
    @classmethod
    def write_workloads(cls, value: list[str]) -> list[str]:
        return _all_known(value, REPLICATION_WORKLOADS, "replication workload")


RejoinTransfer = Literal["ist", "sst"]
# Node 1 commits them within sysbench's margin (2 minutes: workloads/sysbench.py) and node
# 2's IST needs them in node 1's 64 MB gcache (servers/galera.py): oltp_write_only's write
# sets are about 1 KB.
MAX_MISSED_TRANSACTIONS = 20_000


class RejoinSpec(Rounds):
    """The rejoin study: node 2 of the replication study's two clusters (plain, socket.ssl;
    [replication] sets their key type and link) stopped while node 1 commits
    `missed_transactions`, then started and timed until Synced — by IST (its data kept) or
    by a full SST (its data directory emptied) (studies/replication/rejoin.py)."""

    transfers: Annotated[list[RejoinTransfer], Field(min_length=1)] = ["ist", "sst"]
    # oltp_write_only transactions, each one write set; must fit node 2's gcache for IST.
    missed_transactions: Annotated[int, Field(gt=0, le=MAX_MISSED_TRANSACTIONS)] = 2000
    # One rejoin takes what it takes: no warm-up, and run_s is only the ETA's estimate.
    warmup_s: Annotated[int, Field(ge=0, le=0)] = 0
    run_s: Annotated[int, Field(ge=1, le=3600)] = 10
    cell_budget_s: Annotated[float, Field(gt=0)] = 240


class Profile(Strict):
    name: str
    description: str = ""
    # A/A calibration: both sides of every pair are the plain configuration (the `encrypted`
    # role gets a twin of plain), so every difference found is the machine's and encbench's
    # own noise.  `encbench calibrate` sets it; see report/calibration.py.
    calibration: bool = False
    studies: Annotated[list[Study], Field(min_length=1)] = ["at-rest"]
    data: DataSpec = DataSpec()
    server: ServerSpec = ServerSpec()
    regime: RegimeSpec = RegimeSpec()
    measure: MeasureSpec = MeasureSpec()
    transit: TransitSpec = TransitSpec()
    target: TargetSpec | None = None

    operations: OperationsSpec = OperationsSpec()
    state_transfer: StateTransferSpec = StateTransferSpec()
    replication: ReplicationSpec = ReplicationSpec()
    rejoin: RejoinSpec = RejoinSpec()

    @field_validator("name")
    @classmethod
    def safe_name(cls, value: str) -> str:
        if not NAME_PATTERN.fullmatch(value) or ".." in value:
            raise ValueError(
                f"{_toml_value(value)} cannot name the results directory results/NAME-TIMESTAMP; "
                f"use only {NAME_CHARACTERS}, and no '..'"
            )
        return value

    def without(self, left_out: Mapping[str, str]) -> Profile:
        """This profile less the studies `left_out` (study → why it cannot run here): what
        this run measures.  The results directory keeps the whole profile."""
        studies = [s for s in self.studies if s not in left_out]
        if not studies:
            whys = "; ".join(f"{name}: {why}" for name, why in left_out.items())
            raise BadInput(f"profile {self.name} has no study that can run here — {whys}")
        return self.model_copy(update={"studies": studies})


def builtin_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".toml")
        for p in resources.files("encbench.profiles").iterdir()
        if p.name.endswith(".toml")
    )


def _toml_value(value: Any) -> str:
    """A value as it was written in the TOML file, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON's escapes are TOML's, and no control character can break the one line.
        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


# pydantic's type errors: what was expected there.
_EXPECTED = {
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
}


def _type_fix(kind: str, given: Any) -> str:
    if kind == "list_type":
        return "put it in brackets, e.g. [1, 4]"
    if kind == "string_type":
        return 'put it in double quotes, e.g. "value"'
    if isinstance(given, str):
        return "write it without quotes"
    if isinstance(given, bool):
        return "write a number such as 1, not true or false"
    if kind == "int_type" and isinstance(given, float):
        return "write a whole number, without a decimal point"
    return "write a number such as 4" if kind != "bool_type" else "write true or false"


def _message(err: ErrorDetails) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key; check its spelling against the built-in profiles"
    if kind == "value_error":
        return str(err.get("ctx", {}).get("error", err["msg"]))
    if kind == "finite_number":
        return f"{_toml_value(err['input'])} is not a finite number; give a finite value"
    if kind in _EXPECTED:
        given = err["input"]
        return f"expected {_EXPECTED[kind]}, got {_toml_value(given)}; {_type_fix(kind, given)}"
    return str(err["msg"])


def _key(part: int | str) -> str:
    text = str(part)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def _first_error(exc: ValidationError, origin: str) -> str:
    err = exc.errors()[0]
    where = ".".join(_key(part) for part in err["loc"]) or "(top level)"
    return f"{origin}: {where}: {_message(err)}"


def parse(text: str, origin: str) -> Profile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{origin}: not valid TOML: {exc}") from exc
    try:
        profile = Profile.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(_first_error(exc, origin)) from exc
    for section in ("measure", "transit", "operations", "state_transfer", "replication", "rejoin"):
        rounds = getattr(profile, section)
        if rounds.min_rounds > rounds.max_rounds:
            raise BadInput(
                f"{origin}: {section}.min_rounds is larger than {section}.max_rounds; "
                f"lower {section}.min_rounds or raise {section}.max_rounds"
            )
    if profile.measure.profile_cpu and len(profile.server.encryption_algorithm) > 1:
        raise BadInput(
            f"{origin}: measure.profile_cpu calibrates one cipher's core, and "
            "server.encryption_algorithm lists several: profile one algorithm at a time"
        )
    if "operations" in profile.studies and (
        len(profile.server.encryption_algorithm) > 1 or len(profile.server.encryption_scope) > 1
    ):
        raise BadInput(
            f"{origin}: the operations study times one encryption configuration, and "
            "server.encryption_algorithm or server.encryption_scope lists several: list one, "
            "or measure the operations in a profile of their own"
        )
    for study in ("replication", "rejoin"):
        if profile.calibration and study in profile.studies:
            raise BadInput(
                f"{origin}: the {study} study has no A/A calibration yet; remove "
                f'"{study}" from studies to calibrate'
            )
    if profile.calibration and "operations" in profile.studies:
        # Its twin would still be an encrypted server: no A/A of operations exists yet.
        raise BadInput(
            f'{origin}: the operations study has no A/A calibration; remove "operations" '
            "from studies to calibrate, or measure it with `encbench run`"
        )
    _check_shapes(profile, origin)
    t = profile.transit
    if t.rate_mbit is not None and not any(rtt > 0 for rtt in t.rtt_ms):
        raise BadInput(
            f"{origin}: transit.rate_mbit limits the emulated link, which only rows with "
            "transit.rtt_ms > 0 use: add a distance or remove the rate"
        )
    if t.bulk_ciphers and t.tls_version != "TLSv1.2":
        raise BadInput(
            f'{origin}: transit.bulk_ciphers needs transit.tls_version = "TLSv1.2" '
            "(TLS 1.3 suites are not chosen by ssl_cipher)"
        )
    if profile.target is not None:
        tg = profile.target
        if bool(tg.host) == bool(tg.socket):
            raise BadInput(f"{origin}: target: give either host (and port) or socket, not both")
        if bool(tg.ssl_cert) != bool(tg.ssl_key):
            raise BadInput(f"{origin}: target: ssl_cert and ssl_key go together; give both")
        if profile.measure.profile_cpu and "at-rest" in profile.studies:
            raise BadInput(
                f"{origin}: measure.profile_cpu samples a server process on this host, which a "
                "target is not: remove profile_cpu or the target"
            )
        if profile.calibration:
            raise BadInput(
                f"{origin}: an A/A calibration measures this machine's sandboxes, not a target: "
                "remove the target"
            )
        server = profile.server
        if len(server.encryption_algorithm) > 1 or len(server.encryption_scope) > 1:
            raise BadInput(
                f"{origin}: a target encrypts with its own settings, so server.encryption_"
                "algorithm and server.encryption_scope take one value each: list one"
            )
        if profile.measure.sharing != "sequential" and "at-rest" in profile.studies:
            raise BadInput(
                f'{origin}: measure.sharing = "{profile.measure.sharing}" pins server processes '
                'on this host, which a target is not: use sharing = "sequential"'
            )
    return profile


def _check_shapes(profile: Profile, origin: str) -> None:
    """What shapes cannot be combined with (the machine's own limits are preflight's)."""
    if not profile.server.shapes:
        return
    if "at-rest" not in profile.studies:
        raise BadInput(
            f"{origin}: server.shapes confine the at-rest study's servers and studies does not "
            'list "at-rest": add it, or remove server.shapes'
        )
    if profile.target is not None:
        raise BadInput(
            f"{origin}: server.shapes confine servers encbench starts, and a target is a server "
            "it did not start: remove server.shapes or the target"
        )
    if profile.measure.sharing != "sequential":
        raise BadInput(
            f'{origin}: measure.sharing = "{profile.measure.sharing}" pins the servers to CPUs '
            "of its own, and server.shapes give each server its cpuset: use sharing = "
            '"sequential" with shapes'
        )


def _read_text(path: Path) -> str:
    if path.is_dir():
        raise BadInput(f"profile {path} is a directory; give the path of a .toml file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read profile {path}: {exc.strerror}") from exc
    try:
        # utf-8-sig: an editor's byte-order mark is no reason to refuse a profile.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the profile as UTF-8 TOML"
        ) from exc


CALIBRATION_LINE = "# Made an A/A calibration by `encbench calibrate`.\ncalibration = true\n"


def as_calibration(profile: Profile, text: str, origin: str) -> tuple[Profile, str]:
    """The same profile as an A/A calibration, and the TOML text that says so (kept with the
    results, so that `--resume` and `encbench report` see a calibration too).  A top-level key
    written first belongs to the top-level table whatever follows."""
    if profile.calibration:
        return profile, text
    if "calibration" in tomllib.loads(text):
        raise BadInput(
            f"{origin}: calibration = false, and `encbench calibrate` measures A/A: remove "
            "that line (or measure plain against encrypted with `encbench run`)"
        )
    text = CALIBRATION_LINE + text
    return parse(text, origin), text


def load(name_or_path: str) -> tuple[Profile, str]:
    """Returns the profile and its TOML text (kept with the results for --resume)."""
    if name_or_path in builtin_names():
        text = resources.files("encbench.profiles").joinpath(f"{name_or_path}.toml").read_text()
        return parse(text, f"profile {name_or_path}"), text
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        text = _read_text(path)
        return parse(text, str(path)), text
    raise BadInput(
        f"unknown profile {name_or_path!r}: use one of {', '.join(builtin_names())} "
        "or the path of a .toml file"
    )
