"""Which regimes a target's buffer pool allows for a profile's data, as encbench sizes a
sandbox's pool (servers/sizing.py, the profile's [regime]): in memory, both table sets
with the headroom fit in the pool; io-bound, the pool is at most io_bound_fraction of them
(the data 1 / io_bound_fraction times the pool).  encbench does not resize a server it did
not start, so a regime its pool cannot give is skipped, and `plan` and the report say what
would give it: a sandbox run, another pool, or another data size."""

from __future__ import annotations

import math
from dataclasses import dataclass

from encbench.profiles.profile import Profile, builtin_names
from encbench.servers.sizing import BYTES_PER_ROW_ESTIMATE, rows_mb
from encbench.servers.variants import VARIANTS
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.pair import estimated_data_mb


@dataclass(frozen=True)
class RegimeFit:
    """One regime against a target's buffer pool (MiB throughout)."""

    regime: str
    pool_mb: float
    data_mb: float  # both table sets, as estimated before loading
    limit_mb: float  # in memory: the least pool it needs; io-bound: the largest it allows
    table_size: int  # data.table_size with which this pool would give the regime
    factor: float  # in memory: the headroom; io-bound: the data over the pool it needs

    @property
    def possible(self) -> bool:
        if self.regime == "in-memory":
            return self.pool_mb >= self.limit_mb
        return self.pool_mb <= self.limit_mb


def _rows_per_table(both_sets_mb: float, profile: Profile) -> float:
    per_set = both_sets_mb / len(VARIANTS) * 2**20 / BYTES_PER_ROW_ESTIMATE
    return per_set / profile.data.tables


def fit(regime: str, pool_bytes: float, profile: Profile) -> RegimeFit:
    spec = profile.regime
    both_mb = len(VARIANTS) * estimated_data_mb(profile)
    pool_mb = pool_bytes / 2**20
    if regime == "in-memory":
        most_rows = _rows_per_table(pool_mb / spec.in_memory_headroom, profile)
        return RegimeFit(
            regime, pool_mb, both_mb, both_mb * spec.in_memory_headroom,
            math.floor(most_rows), spec.in_memory_headroom,
        )  # fmt: skip
    least_rows = _rows_per_table(pool_mb / spec.io_bound_fraction, profile)
    return RegimeFit(
        regime, pool_mb, both_mb, both_mb * spec.io_bound_fraction,
        math.ceil(least_rows), 1 / spec.io_bound_fraction,
    )  # fmt: skip


def size(mb: float) -> str:
    """MiB in words: GiB from 1 GiB up."""
    if mb >= 1024:
        return f"{mb / 1024:,.1f} GiB"
    return f"{mb:,.0f} MiB" if mb >= 10 else f"{mb:.1f} MiB"


def problem(regime: str, pool_bytes: int, profile: Profile) -> str | None:
    """Why a regime cannot be measured with the server's buffer pool as it is, or None."""
    f = fit(regime, pool_bytes, profile)
    if f.possible:
        return None
    if regime == "in-memory":
        return (
            f"the server's buffer pool ({size(f.pool_mb)}) cannot hold both table sets "
            f"({size(f.data_mb)}) with the headroom ({size(f.limit_mb)}), and encbench does "
            "not resize a server it did not start; use less data (data.table_size)"
        )
    return (
        f"io-bound needs a buffer pool of at most {size(f.limit_mb)} for this data, a restart "
        f"encbench does not do on a server it did not start (its pool is "
        f"{size(f.pool_mb)}); with data.table_size = {f.table_size:,} it would be io-bound"
    )


def sandbox_command(profile: Profile) -> str:
    """The run that measures this profile's io-bound regime on sandboxed servers of this
    machine (each pool sized for its regime), as `run …` completes it."""
    asks = "io-bound" in measure_options(profile).regimes
    if asks and profile.name in builtin_names():
        return f"`encbench run {profile.name}` (without --target)"
    change = "" if asks else ' with "io-bound" in measure.regimes'
    return f"this profile{change} without --target (`encbench run FILE.toml`)"


def plan_line(f: RegimeFit, profile: Profile) -> str:
    """`plan`: the regime against the pool, and what would give it where it cannot be."""
    asked = "" if f.regime in measure_options(profile).regimes else " (not asked by this profile)"
    if f.regime == "in-memory":
        need = (
            f"both table sets ({size(f.data_mb)}) with the profile's headroom "
            f"(× {f.factor:g} = {size(f.limit_mb)})"
        )
        if f.possible:
            return f"in-memory{asked}: possible — the pool holds {need}"
        return (
            f"in-memory{asked}: not possible — the buffer pool is {size(f.pool_mb)} and needs "
            f"to hold {need}; give data.table_size ≤ {f.table_size:,}"
        )
    need = (
        f"the data at least {f.factor:g} × the buffer pool "
        f"(regime.io_bound_fraction = {1 / f.factor:g})"
    )
    if f.possible:
        return f"io-bound{asked}: possible — both table sets ({size(f.data_mb)}) are {need}"
    instead = [f"run {sandbox_command(profile)} on this machine: its sandboxed servers each get "
               "a pool sized for the regime"]  # fmt: skip
    if f.limit_mb >= profile.regime.min_buffer_pool_mb:
        instead.append(f"target a server whose buffer pool is at most {size(f.limit_mb)}")
    data_per_set = rows_mb(f.table_size * profile.data.tables)
    instead.append(
        f"give data.table_size ≥ {f.table_size:,} (about {size(data_per_set)} a set, twice "
        "that on the server's disk)"
    )
    return (
        f"io-bound{asked}: not possible — the buffer pool is {size(f.pool_mb)}, and io-bound "
        f"needs {need}: ≥ {size(f.pool_mb * f.factor)} for both sets, where this profile "
        f"loads {size(f.data_mb)}. Instead: " + "; or ".join(instead)
    )
