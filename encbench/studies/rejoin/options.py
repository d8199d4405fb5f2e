"""The rejoin study's section of the profile (`[rejoin]`).  Its clusters are the replication
study's, set by `[replication]` (galera_pair_study.PairsSpec: key type and link)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from encbench.profiles.options import CellBudget, Rounds, RunSeconds
from encbench.profiles.profile import Profile, no_calibration
from encbench.studies.definition import Settings

SECTION = "rejoin"

RejoinTransfer = Literal["ist", "sst"]
# Node 1 commits them within sysbench's margin (2 minutes: workloads/sysbench.py) and node
# 2's IST needs them in node 1's 64 MB gcache (servers/mariadb/galera.py): oltp_write_only's write
# sets are about 1 KB.
MAX_MISSED_TRANSACTIONS = 20_000


class RejoinSpec(Rounds):
    """The rejoin study: node 2 of the replication study's two clusters (plain, socket.ssl;
    [replication] sets their key type and link) stopped while node 1 commits
    `missed_transactions`, then started and timed until Synced — by IST (its data kept) or
    by a full SST (its data directory emptied) (studies/rejoin/)."""

    transfers: Annotated[list[RejoinTransfer], Field(min_length=1)] = ["ist", "sst"]
    # oltp_write_only transactions, each one write set; must fit node 2's gcache for IST.
    missed_transactions: Annotated[int, Field(gt=0, le=MAX_MISSED_TRANSACTIONS)] = 2000
    # One rejoin takes what it takes: no warm-up, and run_s is only the ETA's estimate.
    warmup_s: Annotated[int, Field(ge=0, le=0)] = 0
    run_s: RunSeconds = 10
    cell_budget_s: CellBudget = 240


def rejoin_options(profile: Profile) -> RejoinSpec:
    return profile.section(SECTION, RejoinSpec)


# What the study's definition reads of its section.
SETTINGS = Settings(
    key=SECTION, model=RejoinSpec, rule=rejoin_options, validate=no_calibration("rejoin")
)
