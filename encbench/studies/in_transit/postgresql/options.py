"""The in-transit study's settings for a PostgreSQL server: the table `[transit.postgresql]`
of its section (which profiles wrote as `[pg_transit]` before: upgrade.py)."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from encbench.net import distance
from encbench.options import AcrossKeys, Rounds, Threads, all_known
from encbench.profile import Profile

# Where these settings are in a profile: [transit]'s own table.
SECTION = "transit"
TABLE = "postgresql"
# connect_select1: every transaction a new connection running `SELECT 1` (the set-up's own
# cost); connect_select_only: a new connection per pgbench select-only transaction;
# select_only: pgbench's select-only transactions over persistent connections; copy: psql
# streaming a table with COPY … TO STDOUT, a new connection per copy.
PgTest = Literal["connect_select1", "connect_select_only", "select_only", "copy"]
CONNECT_TESTS = ("connect_select1", "connect_select_only")
SslMode = Literal["require", "verify-full"]
TlsVersion = Literal["TLSv1.2", "TLSv1.3"]
# The key types measured against PostgreSQL here (servers/pki.py makes more; RSA 1024 needs
# OpenSSL's security level lowered, which this study does not do).
KEY_TYPES = ("rsa2048", "rsa3072", "rsa4096", "ecdsa-p256", "ecdsa-p384")


class PgTransitSpec(Rounds):
    """Plain TCP (sslmode=disable) against TLS to one sandboxed PostgreSQL, driven by pgbench."""

    tests: Annotated[list[PgTest], Field(min_length=1)] = ["connect_select1", "select_only"]
    # The whole chain (CA, server, client verification) of each key type; connect_select1
    # runs at every one, the other tests at the first.
    key_types: Annotated[list[str], Field(min_length=1)] = ["rsa2048"]
    # The server's ssl_min_protocol_version = ssl_max_protocol_version: one row each.
    tls_versions: Annotated[list[TlsVersion], Field(min_length=1)] = ["TLSv1.3"]
    # The TLS side's sslmode; the connect tests run at each, select_only at the first.
    sslmodes: Annotated[list[SslMode], Field(min_length=1)] = ["require"]
    connect_clients: Threads = [1]
    query_clients: Threads = [1, 4]
    # pgbench -i's scale factor: 100,000 rows of pgbench_accounts per unit.
    scale: Annotated[int, Field(ge=1, le=100)] = 1
    # The copy test's table: about this many MiB of COPY's text, streamed whole each copy.
    copy_mb: Annotated[int, Field(ge=1, le=4096)] = 64
    shared_buffers_mb: Annotated[int, Field(ge=16, le=65536)] = 128
    # Round-trip times, as [transit]'s: 0 = loopback on one host.  The tests of
    # distance_tests run at each of them, the client in a network namespace of its own
    # across an emulated link; the others on loopback only.
    rtt_ms: Annotated[list[float], Field(min_length=1)] = [0]
    distance_tests: list[PgTest] = ["connect_select1"]
    # As in [transit]: a cell is one path, and a study has many.
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 1
    cell_budget_s: Annotated[float, Field(gt=0)] = 30

    @field_validator("key_types")
    @classmethod
    def known_key_types(cls, value: list[str]) -> list[str]:
        return all_known(value, KEY_TYPES, "TLS key type")

    def planned_rounds(self, cell: object) -> int | None:
        """A cell across an emulated distance at its fewest rounds: the link's fixed delay
        sets each run's rate, so its rounds agree within ±2% at once (every distance cell of
        the whole runs of percona-2013-ssl and postgresql-distance stopped there)."""
        return self.min_rounds if getattr(cell, "rtt_ms", 0) else None

    @field_validator("rtt_ms")
    @classmethod
    def delays_in_range(cls, value: list[float]) -> list[float]:
        return distance.rtts_in_range(value)

    @model_validator(mode="after")
    def distance_tests_are_measured(self) -> Self:
        # The default names connect_select1, which a profile without it does not measure.
        unknown = [t for t in self.distance_tests if t not in self.tests]
        if unknown and "distance_tests" in self.model_fields_set:
            raise AcrossKeys(
                f"{{section}}.distance_tests names {', '.join(unknown)}, which {{section}}.tests "
                "does not measure: add it there or remove it here"
            )
        return self


def pg_transit_options(profile: Profile) -> PgTransitSpec:
    found = getattr(profile.section(SECTION, Rounds), TABLE)
    assert isinstance(found, PgTransitSpec), "[transit] holds a [transit.postgresql] table"
    return found
