"""The in-transit study's settings for a PostgreSQL server: its section `[pg_transit]` (the
name it had as a study of its own, kept so profiles written then read unchanged; as the
at-rest study's PostgreSQL cells keep `[pg_at_rest]`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from encbench.profiles.options import Threads, known
from encbench.profiles.profile import Profile
from encbench.studies.definition import Settings
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.transit_rounds import TransitRounds

SECTION = "pg_transit"
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


class PgTransitSpec(TransitRounds):
    """Plain TCP (sslmode=disable) against TLS to one sandboxed PostgreSQL, driven by pgbench."""

    # The command line's --threads and --time (commands/overrides.py), as [transit] takes them.
    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "query_clients", "time": "run_s"}

    tests: Annotated[list[PgTest], Field(min_length=1)] = ["connect_select1", "select_only"]
    # The whole chain (CA, server, client verification) of each key type; connect_select1
    # runs at every one, the other tests at the first.
    key_types: Annotated[list[str], Field(min_length=1), known(KEY_TYPES, "TLS key type")] = [
        "rsa2048"
    ]
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
    # The tests measured at every rtt_ms (TransitRounds), the others on loopback only.
    distance_tests: list[PgTest] = ["connect_select1"]


def pg_transit_options(profile: Profile) -> PgTransitSpec:
    return profile.section(SECTION, PgTransitSpec)


def problem(profile: Profile) -> str | None:
    """A calibration: PostgreSQL's cells in transit have no A/A calibration yet."""
    if profile.calibration and kind.measures(profile, kind.POSTGRESQL):
        return (
            "the in-transit study's PostgreSQL cells have no A/A calibration yet; remove "
            '"postgresql" from server.kinds to calibrate'
        )
    return kind.problem(profile)


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=PgTransitSpec, rule=pg_transit_options, validate=problem)
