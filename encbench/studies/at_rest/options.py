"""The at-rest study's section of the profile (`[measure]`): what it measures, how a round
shares the machine, and what those settings cannot be combined with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, PrivateAttr, model_validator

from encbench.machine.placement import Sharing
from encbench.profiles.durations import MYSQL_RUN_OVERHEAD_S, RESTART_S, RUN_OVERHEAD_S
from encbench.profiles.options import Rounds, Threads, budgets_listed, known
from encbench.profiles.profile import Profile
from encbench.servers.mariadb import installs
from encbench.studies.at_rest import steady
from encbench.studies.at_rest.records import RunRecord
from encbench.studies.definition import Settings
from encbench.workloads.sysbench import OLTP_WORKLOADS, WRITE_WORKLOADS

SECTION = "measure"
Regime = Literal["in-memory", "io-bound"]


class MeasureSpec(Rounds):
    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "threads", "time": "run_s"}

    workloads: Annotated[list[str], Field(min_length=1), known(OLTP_WORKLOADS, "workload")] = [
        "oltp_read_only"
    ]
    regimes: Annotated[list[Regime], Field(min_length=1)] = ["in-memory", "io-bound"]
    threads: Threads = [1, 4, 16, 64]
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    # Where the cost goes: after a cell's rounds, one extra paired run of profile_cpu_s
    # seconds with `perf record` on each server (profiling/); needs perf (linux-perf).
    profile_cpu: bool = False
    profile_cpu_s: Annotated[int, Field(ge=1, le=600)] = 5
    # How a round shares the machine (machine/placement.py): one variant after the other, unpinned
    # ("sequential"); the same with servers and client on separate halves of the CPUs
    # ("pinned"); or both variants at once, each on its own half ("duet").
    sharing: Sharing = "sequential"
    # When both servers start afresh: before every block ("block"), so that what a pair of
    # processes has of its own (two identical servers differed by up to a fifth for as long
    # as both lived: README, Calibration) varies between blocks and the interval covers it;
    # or only when the regime, shape or configuration changes ("regime": cheaper, and blind
    # to that difference).  A target's server is never restarted.
    restart: Literal["block", "regime"] = "block"
    # A workload's cells' budget when it is not cell_budget_s: a write run is followed by the
    # flush of its pages (flushing.py), so a write round takes several times a read one and
    # one budget for both leaves the writes without an interval or the reads with time they
    # do not need.
    workload_budget_s: dict[str, Annotated[float, Field(gt=0)]] = {}
    # How a write workload's run is measured (on servers encbench starts): each run between
    # two flushes to zero dirty pages, the flushing charged to it ("flush": flushing.py); or
    # the write path in its steady state, no flush, the servers first warmed up until their
    # dirty pages and checkpoint age level off ("steady": steady.py, its per-second series
    # and p99 kept with every run).  docs/method.md says why steady is the design to cite.
    write_window: Literal["flush", "steady"] = "flush"
    # The steady design's longest warm-up: a server whose write path has not leveled off by
    # then is measured anyway, its runs marked (RunRecord.leveled) and its cell named.
    steady_warmup_max_s: Annotated[int, Field(ge=1, le=3600)] = 120
    # The steady design's chunk of load between two readings of the write path: the warm-up
    # lasts at least 2 × steady.READINGS chunks (20 s at the default).
    steady_chunk_s: Annotated[int, Field(ge=1, le=60)] = steady.CHUNK_S
    # Not a key: what the plan takes a run's overhead to be under the profile's install
    # (measure_options).
    _run_overhead_s: float = PrivateAttr(default=RUN_OVERHEAD_S)
    _block_s: float | None = PrivateAttr(default=None)

    @property
    def run_overhead_s(self) -> float:
        return self._run_overhead_s

    @model_validator(mode="after")
    def budgets_of_listed_workloads(self) -> Self:
        budgets_listed(self.workload_budget_s, self.workloads, "workload_budget_s", "workloads")
        return self

    @property
    def block_s(self) -> float | None:
        return self._block_s

    def for_cell(self, cell: object) -> Self:
        """A cell of a workload with a budget of its own (workload_budget_s) runs by that;
        in the steady design with fresh servers per block the plan knows what a block of it
        takes (measured there: other designs' plans stay as their whole runs were measured)."""
        workload = str(getattr(cell, "workload", ""))
        budget = self.workload_budget_s.get(workload)
        spec = self if budget is None else self.model_copy(update={"cell_budget_s": budget})
        if self.restart != "block" or self.write_window != "steady":
            return spec
        spec = spec.model_copy() if spec is self else spec
        spec._block_s = self._planned_block_s(workload)
        return spec

    def _planned_block_s(self, workload: str) -> float:
        """A block: both servers restarted, warmed up (one after the other, or until their
        write path levels off: steady.py), then two rounds, each two runs or one duet."""
        run_s = self.run_s + self.run_overhead_s
        levels = self.write_window == "steady" and workload in WRITE_WORKLOADS
        leveling = 2 * steady.READINGS * (self.steady_chunk_s + steady.CHUNK_OVERHEAD_S)
        if self.sharing == "duet":
            warm_up = leveling if levels else 2 * self.warmup_s
            return RESTART_S + warm_up + 2 * run_s
        if levels:  # sequential: each run after its own ramp back to the steady state
            return RESTART_S + 2 * leveling + 4 * (run_s + leveling)
        return RESTART_S + 2 * self.warmup_s + 4 * run_s


def measure_options(profile: Profile) -> MeasureSpec:
    spec = profile.section(SECTION, MeasureSpec)
    if installs.family_of(profile.server.install) == installs.MYSQL and spec.restart == "block":
        # The plan's time of a run: MySQL's servers restart slower for each block.
        spec = spec.model_copy()
        spec._run_overhead_s = MYSQL_RUN_OVERHEAD_S
    return spec


def problem(profile: Profile) -> str | None:
    """What [measure] cannot be combined with in the rest of the profile.  Asked of every
    profile, this study listed or not: server.shapes are for this study alone."""
    measure = measure_options(profile)
    if measure.profile_cpu and len(profile.server.encryption_algorithm) > 1:
        return (
            "measure.profile_cpu calibrates one cipher's core, and "
            "server.encryption_algorithm lists several: profile one algorithm at a time"
        )
    listed = RunRecord.STUDY in profile.studies
    if profile.calibration and profile.server.encryption_against != ["plain"]:
        return (
            "an A/A calibration measures plain against plain: server.encryption_against "
            'takes "plain" (the default) there'
        )
    layer = _layer_problem(profile, listed)
    if layer is not None:
        return layer
    shapes = _shapes_problem(profile, measure, listed)
    if shapes is None and listed and profile.target is not None:
        return _target_problem(measure)
    return shapes


def _layer_problem(profile: Profile, listed: bool) -> str | None:
    """What the filesystem layer cannot be combined with (a target: the checks of
    profiles/profile.py)."""
    if not profile.server.filesystem or profile.target is not None:
        return None
    if not listed:
        return (
            "server.encryption_layer puts the at-rest study's servers on an encrypted "
            'filesystem and studies does not list "at-rest": add it, or remove the fs layers'
        )
    if profile.calibration:
        return (
            "an A/A calibration measures plain against plain: server.encryption_layer takes "
            '"tde" (the default) there'
        )
    if profile.server.shapes:
        return (
            "server.shapes and the filesystem layer (server.encryption_layer) are not "
            "measured together: an IOPS cap would fall on the loop device; use one of them"
        )
    return None


def _target_problem(measure: MeasureSpec) -> str | None:
    """What a target's server cannot take: encbench did not start it on this host."""
    if measure.profile_cpu:
        return (
            "measure.profile_cpu samples a server process on this host, which a "
            "target is not: remove profile_cpu or the target"
        )
    if measure.sharing != "sequential":
        return (
            f'measure.sharing = "{measure.sharing}" pins server processes '
            'on this host, which a target is not: use sharing = "sequential"'
        )
    return None


def _shapes_problem(profile: Profile, measure: MeasureSpec, listed: bool) -> str | None:
    """What shapes cannot be combined with (the machine's own limits are preflight's)."""
    if not profile.server.shapes:
        return None
    if not listed:
        return (
            "server.shapes confine the at-rest study's servers and studies does not "
            'list "at-rest": add it, or remove server.shapes'
        )
    if profile.target is not None:
        return (
            "server.shapes confine servers encbench starts, and a target is a server "
            "it did not start: remove server.shapes or the target"
        )
    if measure.sharing != "sequential":
        return (
            f'measure.sharing = "{measure.sharing}" pins the servers to CPUs '
            "of its own, and server.shapes give each server its cpuset: use sharing = "
            '"sequential" with shapes'
        )
    return None


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=MeasureSpec, rule=measure_options, validate=problem)
