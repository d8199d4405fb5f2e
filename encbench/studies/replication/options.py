"""The replication study's section of the profile (`[replication]`), which also sets the
clusters the rejoin study measures on (galera_pair_study.PairsSpec: key type and link)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

from pydantic import Field

from encbench.engine.galera_pair_study import PAIRS_SECTION, PairsSpec
from encbench.profiles.options import CellBudget, RunSeconds, Threads, WarmupSeconds, known
from encbench.profiles.profile import Profile, no_calibration
from encbench.studies.definition import Settings
from encbench.workloads.sysbench import OLTP_WORKLOADS, WRITE_WORKLOADS

# Its section is the one that sets the pairs both it and the rejoin study measure on.
SECTION = PAIRS_SECTION

# The replication study's workloads: a read-only one replicates nothing.
REPLICATION_WORKLOADS = tuple(w for w in OLTP_WORKLOADS if w in WRITE_WORKLOADS)


class ReplicationSpec(PairsSpec):
    """The replication study: sysbench write workloads against node 1 of a 2-node Galera
    cluster, a plain cluster against one with Galera's own TLS (socket.ssl_*), both up at
    once on their own emulated hosts (studies/replication/)."""

    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "threads", "time": "run_s"}

    workloads: Annotated[
        list[str], Field(min_length=1), known(REPLICATION_WORKLOADS, "replication workload")
    ] = ["oltp_write_only", "oltp_read_write"]
    threads: Threads = [4]
    warmup_s: WarmupSeconds = 5
    run_s: RunSeconds = 20
    cell_budget_s: CellBudget = 240


def replication_options(profile: Profile) -> ReplicationSpec:
    return profile.section(SECTION, ReplicationSpec)


# What the study's definition reads of its section.
SETTINGS = Settings(
    key=SECTION,
    model=ReplicationSpec,
    rule=replication_options,
    validate=no_calibration("replication"),
)
