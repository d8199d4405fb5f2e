"""PostgreSQL's ways: a target's login, plan and leftovers (servers/postgresql/readiness.py,
servers/postgresql/target.py).  Its studies name PostgreSQL's programs in their own needs: against
a target, the in-transit study needs only the clients, so the kind itself needs no tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.servers.postgresql import estimate as pg_estimate
from encbench.servers.postgresql import readiness as pg_readiness
from encbench.servers.postgresql import target as pg_target
from encbench.servers.ways import KindWays, TargetWays


def _ownership(spec: Any, databases: list[str], results_dir: str) -> None:
    with pg_target.login(spec) as target:
        for db in databases:
            target.ownership(db, pg_target.marker(results_dir))


def _dropper(spec: Any) -> Callable[[Any], None]:
    def drop(found: Any) -> None:
        with pg_target.login(spec) as target:
            target.drop_owned(found.database, found.marker)

    return drop


WAYS = KindWays(
    tools=list,
    target=TargetWays(
        check=lambda spec, needs: pg_readiness.check(spec),
        plan_lines=lambda spec, needs, algorithm: pg_readiness.plan_lines(spec),
        ownership=_ownership,
        dropper=_dropper,
    ),
    estimate=pg_estimate,
)
