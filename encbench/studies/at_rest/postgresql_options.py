"""The section of the at-rest study's PostgreSQL cells (`[pg_at_rest]`): its workloads,
regimes and clients, its rounds, and what only PostgreSQL has (pgbench's scale, the
servers' memory).

Its two regimes size each server's memory from the data: in memory, shared_buffers above
the data (in_memory_buffers_mb); io-bound, the profile's shared_buffers, and the data well
above what the server's memory group may hold (shared_buffers and the cache allowance), since
PostgreSQL reads through the page cache, which would otherwise serve "io-bound" from RAM."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from encbench.profiles.options import AcrossKeys, Rounds, Threads
from encbench.profiles.profile import Profile
from encbench.studies.at_rest.cells import measures
from encbench.studies.at_rest.records import CellKey
from encbench.studies.definition import Settings

SECTION = "pg_at_rest"
KIND = "postgresql"
# pgbench's built-in scripts: TPC-B (sort of), its default, and select-only (-S); and
# sysbench's stock OLTP scripts through its PostgreSQL driver, on the profile's [data]
# tables (oltp.py): the workloads the MariaDB at-rest study runs.
Workload = Literal[
    "tpcb_like", "select_only", "oltp_read_only", "oltp_point_select", "oltp_read_write"
]
Regime = Literal["in-memory", "io-bound"]
# pgbench -i: about 16 MB per unit of scale (pgbench_accounts and its index), an estimate
# for the checks before a run; the run measures the real size after loading.
MB_PER_SCALE = 16
# In memory: shared_buffers hold the data, its growth under TPC-B's writes and a margin.
IN_MEMORY_HEADROOM = 1.25
IN_MEMORY_RESERVE_MB = 64
# Io-bound: the data at least this many times what the server's group may hold.
IO_BOUND_FACTOR = 2


# sysbench's stock OLTP scripts a cell may run (oltp.py), and those that write.
OLTP_WORKLOADS = ("oltp_read_only", "oltp_point_select", "oltp_read_write")
OLTP_WRITES = frozenset({"oltp_read_write"})
# Each sbtest row with its share of the primary key and the secondary index, on PostgreSQL:
# an estimate for the checks before a run (the run measures the real size).
KB_PER_SBTEST_ROW = 0.25


def data_mb_estimate(scale: int) -> int:
    return scale * MB_PER_SCALE


def is_oltp(workload: str) -> bool:
    return workload in OLTP_WORKLOADS


def sbtest_mb_estimate(tables: int, table_size: int) -> int:
    return round(tables * table_size * KB_PER_SBTEST_ROW / 1024)


def in_memory_buffers_mb(data_mb: float) -> int:
    """shared_buffers of the in-memory regime for this much data."""
    return math.ceil(data_mb * IN_MEMORY_HEADROOM) + IN_MEMORY_RESERVE_MB


class PgAtRestSpec(Rounds):
    """Plain against fscrypt below one PostgreSQL each, driven by pgbench."""

    # The command line's --threads and --time (commands/overrides.py): pgbench's clients, its runs.
    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "clients", "time": "run_s"}

    workloads: Annotated[list[Workload], Field(min_length=1)] = ["tpcb_like", "select_only"]
    regimes: Annotated[list[Regime], Field(min_length=1)] = ["in-memory", "io-bound"]
    clients: Threads = [1, 4]
    # pgbench -i's scale factor: 100,000 rows of pgbench_accounts per unit.
    scale: Annotated[int, Field(ge=1, le=2000)] = 50
    # The io-bound regime's shared_buffers (in memory: in_memory_buffers_mb of the data).
    shared_buffers_mb: Annotated[int, Field(ge=16, le=65536)] = 128
    # Each server's memory group holds shared_buffers and this: its backends and the page
    # cache of its files.
    cache_allowance_mb: Annotated[int, Field(ge=64, le=65536)] = 256
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 3
    run_s: Annotated[int, Field(ge=1, le=3600)] = 2
    cell_budget_s: Annotated[float, Field(gt=0)] = 60

    @model_validator(mode="after")
    def io_bound_is_above_memory(self) -> Self:
        held = self.shared_buffers_mb + self.cache_allowance_mb
        data = data_mb_estimate(self.scale)
        if "io-bound" in self.regimes and data < IO_BOUND_FACTOR * held:
            need = math.ceil(IO_BOUND_FACTOR * held / MB_PER_SCALE)
            raise AcrossKeys(
                f"{{section}}.scale {self.scale} is about {data:,} MB of data and each "
                f"io-bound server's memory group holds {held:,} MB ({{section}}.shared_buffers_mb"
                f" + {{section}}.cache_allowance_mb): io-bound would be served from memory; "
                f"raise {{section}}.scale to {need} or more, or lower those"
            )
        return self

    def memory_limit_mb(self, regime: str, data_mb: float) -> int:
        """The memory group's limit of a server in this regime."""
        return self.buffers_mb(regime, data_mb) + self.cache_allowance_mb

    def buffers_mb(self, regime: str, data_mb: float) -> int:
        """shared_buffers in this regime."""
        if regime == "in-memory":
            return in_memory_buffers_mb(data_mb)
        return self.shared_buffers_mb


def pg_at_rest_options(profile: Profile) -> PgAtRestSpec:
    return profile.section(SECTION, PgAtRestSpec)


def measured(profile: Profile) -> bool:
    """Whether the profile's at-rest study measures PostgreSQL (never on a target)."""
    return measures(profile, KIND)


def problem(profile: Profile) -> str | None:
    """What the section cannot be combined with: a calibration (of MariaDB's cells alone so
    far), and sysbench's tables (the [data] section's) that an io-bound server's memory
    group would hold: its "io-bound" reads would come from memory."""
    if not measured(profile):
        return None
    if profile.calibration:
        return (
            "the at-rest study's PostgreSQL cells have no A/A calibration yet; remove "
            '"postgresql" from server.kinds to calibrate'
        )
    s = pg_at_rest_options(profile)
    if "io-bound" in s.regimes and any(is_oltp(w) for w in s.workloads):
        d = profile.data
        data = sbtest_mb_estimate(d.tables, d.table_size)
        held = s.shared_buffers_mb + s.cache_allowance_mb
        if data < IO_BOUND_FACTOR * held:
            return (
                f"data is {d.tables} × {d.table_size:,} rows, about {data:,} MB in PostgreSQL, "
                f"and each io-bound server's memory group holds {held:,} MB ({SECTION}."
                f"shared_buffers_mb + {SECTION}.cache_allowance_mb): sysbench's io-bound "
                f"reads would come from memory; raise data.table_size or data.tables to "
                f"about {IO_BOUND_FACTOR * held:,} MB of rows, or lower those"
            )
    return None


def cells(profile: Profile) -> list[CellKey]:
    """PostgreSQL's cells a profile asks for, in the order they are measured: by regime
    (each a restart of both servers with its memory), then workload, then clients; each of
    the filesystem layer, PostgreSQL's only one."""
    if not measured(profile):
        return []
    s = pg_at_rest_options(profile)
    return [
        CellKey(workload, regime, n, layer="fs", kind=KIND)
        for regime in s.regimes
        for workload in s.workloads
        for n in s.clients
    ]


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=PgAtRestSpec, rule=pg_at_rest_options, validate=problem)
