"""Which PostgreSQL at-rest cells a profile asks for, in the order they are measured: by
regime (each a restart of both servers with its memory), then workload, then clients."""

from __future__ import annotations

from encbench.profile import Profile
from encbench.studies.pg_at_rest.options import pg_at_rest_options
from encbench.studies.pg_at_rest.records import PgAtRestCell, PgAtRestRecord


def cells(profile: Profile) -> list[PgAtRestCell]:
    if PgAtRestRecord.STUDY not in profile.studies:
        return []
    s = pg_at_rest_options(profile)
    return [
        PgAtRestCell(regime, workload, n)
        for regime in s.regimes
        for workload in s.workloads
        for n in s.clients
    ]
