"""PostgreSQL's recording rules for `encbench estimate --rules`: its causes from
postgres_exporter's series (prometheus_pg.py), × PostgreSQL's units, recorded under the same
names as MariaDB's (one series per instance and bound, and label kind="postgresql", which
keeps the two kinds' rules apart for promtool), so that the total adds both kinds."""

from __future__ import annotations

from collections.abc import Mapping

from encbench.estimate import model, pg_estimate, rules
from encbench.estimate.prometheus_pg import CAUSE_FIELD, SERIES
from encbench.estimate.units import Unit


def rate_expr(field: str, step: str, matchers: str) -> str:
    parts = [f"sum by (instance) (rate({n}{{{matchers}}}[{step}]))" for n in SERIES[field]]
    return f"({' + '.join(parts)})"


def lines(
    units: Mapping[str, Unit], step: str, matchers: str, scope: model.Scope, host: str
) -> tuple[list[str], list[str]]:
    """The rules' lines, and the causes in scope they record."""
    found = ["      # PostgreSQL (postgres_exporter), its data directory on fscrypt"]
    recorded = []
    for cause in pg_estimate.CAUSES:
        field = CAUSE_FIELD.get(cause.key)
        if field is None:
            continue  # not exported (WAL) or not counted (bytes through TLS, binary log)
        unit = units.get(cause.unit)
        found += rules.cause_rules(
            cause, f"PostgreSQL {cause.label}", unit, host, step,
            rate_expr(field, step, matchers), labels=", kind: postgresql",
        )  # fmt: skip
        if unit is None:
            continue
        if scope in cause.scopes:
            recorded.append(cause.key)
    return found, recorded
