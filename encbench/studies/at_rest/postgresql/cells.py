"""Which PostgreSQL cells of the at-rest study a profile asks for, in the order they are
measured: by regime (each a restart of both servers with its memory), then workload, then
clients."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.studies.at_rest.postgresql.options import measured, pg_at_rest_options
from encbench.studies.at_rest.postgresql.records import PgAtRestCell


def cells(profile: Profile) -> list[PgAtRestCell]:
    if not measured(profile):
        return []
    s = pg_at_rest_options(profile)
    return [
        PgAtRestCell(regime, workload, n)
        for regime in s.regimes
        for workload in s.workloads
        for n in s.clients
    ]
