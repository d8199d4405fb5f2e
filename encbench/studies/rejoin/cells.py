"""Which rejoin cells a profile asks for: per transfer (IST, SST), after the same number of
missed transactions."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.studies.rejoin.options import rejoin_options
from encbench.studies.rejoin.records import RejoinCell


def cells(profile: Profile) -> list[RejoinCell]:
    """The study's cells, in the profile's order (none when it does not run)."""
    if "rejoin" not in profile.studies:
        return []
    spec = rejoin_options(profile)
    return [RejoinCell(t, spec.missed_transactions) for t in spec.transfers]
