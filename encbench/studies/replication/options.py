"""The replication study's section of the profile (`[replication]`) and the rejoin study's
(`[rejoin]`), which measures on the replication study's clusters."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator

from encbench.options import Rounds, Threads, all_known
from encbench.profile import Profile
from encbench.workloads.sysbench import OLTP_WORKLOADS, WRITE_WORKLOADS

SECTION = "replication"
REJOIN_SECTION = "rejoin"

# The replication study's workloads: a read-only one replicates nothing.
REPLICATION_WORKLOADS = tuple(w for w in OLTP_WORKLOADS if w in WRITE_WORKLOADS)


class ReplicationSpec(Rounds):
    """The replication study: sysbench write workloads against node 1 of a 2-node Galera
    cluster, a plain cluster against one with Galera's own TLS (socket.ssl_*), both up at
    once on their own emulated hosts (studies/replication/)."""

    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "threads", "time": "run_s"}

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
        return all_known(value, REPLICATION_WORKLOADS, "replication workload")


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


def replication_options(profile: Profile) -> ReplicationSpec:
    return profile.section(SECTION, ReplicationSpec)


def rejoin_options(profile: Profile) -> RejoinSpec:
    return profile.section(REJOIN_SECTION, RejoinSpec)


def no_calibration(study: str) -> Callable[[Profile], str | None]:
    """Refuses a calibration of a profile that lists `study`: neither has an A/A yet."""

    def problem(profile: Profile) -> str | None:
        if profile.calibration and study in profile.studies:
            return (
                f"the {study} study has no A/A calibration yet; remove "
                f'"{study}" from studies to calibrate'
            )
        return None

    return problem
