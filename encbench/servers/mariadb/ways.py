"""MariaDB's ways: the server's tools, and a target's login, grants, plan and leftovers
(servers/mariadb/readiness.py, servers/owned.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.machine import checks
from encbench.servers import owned
from encbench.servers.mariadb import estimate, readiness
from encbench.servers.mariadb.user_server import UserServer
from encbench.servers.ways import KindWays, TargetWays


def _ownership(spec: Any, databases: list[str], results_dir: str) -> None:
    server = readiness.server_of(spec)
    for db in databases:
        owned.ownership(server, db, owned.marker(results_dir))


def _dropper(spec: Any) -> Callable[[Any], None]:
    server = UserServer.of_target(spec)
    return lambda found: owned.drop_owned(server, found.database, found.marker)


WAYS = KindWays(
    tools=checks.mariadb_server,
    target=TargetWays(
        check=readiness.check,
        plan_lines=readiness.plan_lines,
        ownership=_ownership,
        dropper=_dropper,
    ),
    estimate=estimate,
)
