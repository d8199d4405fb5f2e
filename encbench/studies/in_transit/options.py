"""The in-transit study's sections of the profile: `[transit]` for MariaDB's and MySQL's
cells, `[pg_transit]` for PostgreSQL's (the name it had when PostgreSQL's cells were a study
of their own, kept so profiles written then read unchanged)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from encbench.errors import BadInput
from encbench.net import tunnels
from encbench.profiles.options import AcrossKeys, Threads, known, one_known
from encbench.profiles.profile import Profile
from encbench.servers import pki
from encbench.servers.mariadb import installs, tls
from encbench.studies.definition import Settings
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.transit_rounds import TransitRounds

SECTION = "transit"
# The longest run of first logins (client.FIRST_LOGIN_USERS last about 4.5 s of them).
FIRST_LOGIN_RUN_S = 3
# connect_first: MySQL's first logins (connect's connections, each the first login of a user
# of its own since the server's authentication cache was emptied: cells.py).
TransitTest = Literal[
    "connect", "connect_first", "oltp_point_select", "oltp_read_only", "bulk", "dump"
]
TransitMethod = Literal["tls", "stunnel", "ssh"]


class TransitSpec(TransitRounds):
    """The in-transit study: plain TCP vs TLS (or a tunnel) against one sandboxed server."""

    SYSBENCH: ClassVar[Mapping[str, str]] = {"threads": "query_threads", "time": "run_s"}

    tests: Annotated[list[TransitTest], Field(min_length=1)] = ["connect", "oltp_point_select"]
    # Native TLS: one cell group per server key type (the whole chain uses that type).
    key_types: Annotated[list[str], Field(min_length=1), known(pki.KEY_TYPES, "TLS key type")] = [
        "rsa2048"
    ]
    tls_version: Literal["TLSv1.2", "TLSv1.3"] = "TLSv1.3"
    # TLS suites for the native TLS rows of the connect and bulk tests, one row each, chosen
    # on the server (ssl_cipher); empty = the server's default.  Every suite must be one of
    # tls_version (servers/mariadb/tls.py: check_suite).
    ciphers: list[str] = []
    # The bulk test's suites instead of `ciphers` (older profiles' key; empty: `ciphers`).
    bulk_ciphers: list[str] = []
    methods: Annotated[list[TransitMethod], Field(min_length=1)] = ["tls"]
    tunnel_key_type: Annotated[str, one_known(tunnels.SSH_KEY_TYPES, "tunnel key type")] = "rsa2048"
    # stunnel rows without and/or with TLS session resumption (its client resumes by default;
    # MariaDB's clients never do, so `false` is the like-for-like comparison).
    stunnel_resume: Annotated[list[bool], Field(min_length=1)] = [False]
    ssh_ciphers: Annotated[
        list[str], Field(min_length=1), known(tunnels.SSH_CIPHERS, "SSH cipher")
    ] = ["aes128-gcm@openssh.com"]
    connect_threads: Threads = [1, 4]
    query_threads: Threads = [1, 4, 16]
    # The tests measured at every rtt_ms (TransitRounds), through every method; the others
    # on loopback only.
    distance_tests: list[TransitTest] = ["connect"]
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    table_size: Annotated[int, Field(gt=0)] = 10_000
    bulk_mb: Annotated[int, Field(gt=0, le=8192)] = 128

    @model_validator(mode="after")
    def rate_needs_a_distance(self) -> Self:
        if self.rate_mbit is not None and not any(rtt > 0 for rtt in self.rtt_ms):
            raise AcrossKeys(
                "{section}.rate_mbit limits the emulated link, which only rows with "
                "{section}.rtt_ms > 0 use: add a distance or remove the rate"
            )
        return self

    @model_validator(mode="after")
    def suites_of_the_tls_version(self) -> Self:
        for key in ("ciphers", "bulk_ciphers"):
            for suite in getattr(self, key):
                try:
                    tls.check_suite(suite, self.tls_version, f"{SECTION}.tls_version")
                except BadInput as exc:
                    # The message is a format string ({section}): the suite's braces escaped.
                    why = str(exc).replace("{", "{{").replace("}", "}}")
                    raise AcrossKeys(f"{{section}}.{key}: {why}") from None
        return self


def transit_options(profile: Profile) -> TransitSpec:
    return profile.section(SECTION, TransitSpec)


def problem(profile: Profile) -> str | None:
    """What [transit] cannot be combined with in the rest of the profile: first logins are
    MySQL's (its caching_sha2_password caches a login; MariaDB's logins are each a full one,
    the connect rows), measured on encbench's own MySQL (its users, its FLUSH PRIVILEGES)."""
    t = transit_options(profile) if kind.measures(profile, "mariadb") else None
    if t is None or "connect_first" not in t.tests:
        return None
    if "tls" not in t.methods:
        return 'transit.tests: connect_first measures the server\'s own TLS: add "tls" to methods'
    if t.run_s > FIRST_LOGIN_RUN_S:
        return (
            f"transit.run_s: {t.run_s} s of first logins would use more users than encbench "
            f"makes for them: give at most {FIRST_LOGIN_RUN_S}, or remove connect_first"
        )
    if profile.target is None and installs.family_of(profile.server.install) != installs.MYSQL:
        return (
            "transit.tests: connect_first measures MySQL's first logins (caching_sha2_password "
            "caches a login; every MariaDB login is a full one, the connect rows): add "
            'server.install = "mysql", or remove it'
        )
    return None


# What the study's definition reads of its section.
SETTINGS = Settings(key=SECTION, model=TransitSpec, rule=transit_options, validate=problem)


# -- PostgreSQL ------------------------------------------------------------------------------
PG_SECTION = "pg_transit"
# connect_select1: every transaction a new connection running `SELECT 1` (the set-up's own
# cost); connect_select_only: a new connection per pgbench select-only transaction;
# select_only: pgbench's select-only transactions over persistent connections; copy: psql
# streaming a table with COPY … TO STDOUT, a new connection per copy.
PgTest = Literal["connect_select1", "connect_select_only", "select_only", "copy"]
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
    return profile.section(PG_SECTION, PgTransitSpec)


def pg_problem(profile: Profile) -> str | None:
    """A calibration: PostgreSQL's cells in transit have no A/A calibration yet."""
    if profile.calibration and kind.measures(profile, kind.POSTGRESQL):
        return (
            "the in-transit study's PostgreSQL cells have no A/A calibration yet; remove "
            '"postgresql" from server.kinds to calibrate'
        )
    return kind.problem(profile)


# What the study's definition reads of PostgreSQL's section.
PG_SETTINGS = Settings(
    key=PG_SECTION, model=PgTransitSpec, rule=pg_transit_options, validate=pg_problem
)
