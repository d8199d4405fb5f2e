"""Profiles written when PostgreSQL in transit was a study of its own, read as this one's:
`studies` naming "pg-in-transit" lists "in-transit" with `[server] kinds = ["postgresql"]`
(unless it names kinds), and its section `[pg_transit]` is `[transit.postgresql]`, key for
key.  Results directories keep the profile they ran, so `report` and `--resume` read them."""

from __future__ import annotations

from typing import Any

from encbench.errors import BadInput
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.postgresql.options import SECTION, TABLE
from encbench.studies.in_transit.postgresql.records import PgTransitRecord

FORMER_NAME = PgTransitRecord.STUDY
FORMER_SECTION = "pg_transit"


def upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """The profile's TOML as this encbench reads it (unchanged unless written before)."""
    studies = raw.get("studies")
    listed = isinstance(studies, list) and FORMER_NAME in studies
    former = raw.get(FORMER_SECTION)
    if not listed and former is None:
        return raw
    new = {k: v for k, v in raw.items() if k != FORMER_SECTION}
    if listed:
        assert isinstance(studies, list)
        if kind.NAME in studies:
            raise BadInput(
                f'studies lists "{kind.NAME}" and "{FORMER_NAME}", now one study that measures '
                "one kind of server a run: keep one, and run the profile once per kind "
                '(server.kinds = ["mariadb"] or ["postgresql"])'
            )
        new["studies"] = [kind.NAME if s == FORMER_NAME else s for s in studies]
        server = raw.get("server")
        if server is None or (isinstance(server, dict) and "kinds" not in server):
            new["server"] = {**(server or {}), "kinds": ["postgresql"]}
    if former is not None:
        section = raw.get(SECTION)
        if isinstance(section, dict) and TABLE in section:
            raise BadInput(
                f"[{FORMER_SECTION}] is [{SECTION}.{TABLE}] now, and both are given: "
                f"keep [{SECTION}.{TABLE}]"
            )
        new[SECTION] = {**(section if isinstance(section, dict) else {}), TABLE: former}
    return new
