"""The in-transit study's section of the profile (`[transit]`): MariaDB's and MySQL's cells
(PostgreSQL's are in `[pg_transit]`: postgresql/options.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from encbench.errors import BadInput
from encbench.net import tunnels
from encbench.profiles.options import AcrossKeys, Threads, known, one_known
from encbench.profiles.profile import Profile
from encbench.proof import tls
from encbench.servers import pki
from encbench.servers.mariadb import installs
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
    # tls_version (proof/tls.py: check_suite).
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
