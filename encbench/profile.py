"""Profiles: what a study measures, as a TOML file validated field by field.

Built-in profiles live in encbench/profiles/*.toml; a user may pass a path instead.  Unknown
keys are refused (a typo must not silently fall back to a default) and every error names the
key, e.g. `measure.threads.0: must be > 0`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from encbench.errors import BadInput
from encbench.net import netns, tunnels
from encbench.servers import pki
from encbench.servers.variants import Algorithm, Scope
from encbench.workloads.sysbench import OLTP_WORKLOADS

DEFAULT_PROFILE = "quick"
Regime = Literal["in-memory", "io-bound"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataSpec(Strict):
    tables: Annotated[int, Field(gt=0, le=1000)] = 4
    table_size: Annotated[int, Field(gt=0)] = 100_000


class ServerSpec(Strict):
    encryption_algorithm: Algorithm = "AES_CTR"
    encryption_scope: Scope = "tables"


class RegimeSpec(Strict):
    # in-memory: the buffer pool holds all data with this much headroom (× data size).
    in_memory_headroom: Annotated[float, Field(ge=1.2, le=10)] = 2.0
    # io-bound: the buffer pool is this fraction of the data size.
    io_bound_fraction: Annotated[float, Field(gt=0, le=0.5)] = 0.1
    # MariaDB rounds the buffer pool to whole chunks; below this it would not start.
    min_buffer_pool_mb: Annotated[int, Field(ge=6)] = 8


class Rounds(Strict):
    """Paired rounds and when a cell stops: shared by both studies (plan.StopRule)."""

    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 3
    run_s: Annotated[int, Field(ge=1, le=3600)] = 1
    min_rounds: Annotated[int, Field(ge=2, le=1000)] = 5
    max_rounds: Annotated[int, Field(ge=2, le=10000)] = 400
    target_halfwidth_pct: Annotated[float, Field(gt=0, le=50)] = 2.0
    cell_budget_s: Annotated[float, Field(gt=0)] = 85


class MeasureSpec(Rounds):
    workloads: Annotated[list[str], Field(min_length=1)] = ["oltp_read_only"]
    regimes: Annotated[list[Regime], Field(min_length=1)] = ["in-memory", "io-bound"]
    threads: Annotated[list[Annotated[int, Field(gt=0, le=4096)]], Field(min_length=1)] = [
        1,
        4,
        16,
        64,
    ]
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"

    @field_validator("workloads")
    @classmethod
    def known_workloads(cls, value: list[str]) -> list[str]:
        return _all_known(value, OLTP_WORKLOADS, "workload")


def _all_known(values: list[str], choices: Iterable[str], what: str) -> list[str]:
    for name in values:
        if name not in choices:
            raise ValueError(f"unknown {what} {name!r}; choose from {', '.join(choices)}")
    return values


Study = Literal["at-rest", "in-transit"]
TransitTest = Literal["connect", "oltp_point_select", "oltp_read_only", "bulk", "dump"]
TransitMethod = Literal["tls", "stunnel", "ssh"]
Threads = Annotated[list[Annotated[int, Field(gt=0, le=1024)]], Field(min_length=1)]


class TransitSpec(Rounds):
    """The in-transit study: plain TCP vs TLS (or a tunnel) against one sandboxed server."""

    tests: Annotated[list[TransitTest], Field(min_length=1)] = ["connect", "oltp_point_select"]
    # Native TLS: one cell group per server key type (the whole chain uses that type).
    key_types: Annotated[list[str], Field(min_length=1)] = ["rsa2048"]
    tls_version: Literal["TLSv1.2", "TLSv1.3"] = "TLSv1.3"
    # TLS 1.2 cipher suites for the bulk test, chosen on the server (ssl_cipher); empty = the
    # server's default.  Needs tls_version = "TLSv1.2" (TLS 1.3 suites ignore ssl_cipher).
    bulk_ciphers: list[str] = []
    methods: Annotated[list[TransitMethod], Field(min_length=1)] = ["tls"]
    tunnel_key_type: str = "rsa2048"
    # stunnel rows without and/or with TLS session resumption (its client resumes by default;
    # MariaDB's clients never do, so `false` is the like-for-like comparison).
    stunnel_resume: Annotated[list[bool], Field(min_length=1)] = [False]
    ssh_ciphers: Annotated[list[str], Field(min_length=1)] = ["aes128-gcm@openssh.com"]
    connect_threads: Threads = [1, 4]
    query_threads: Threads = [1, 4, 16]
    # Round-trip times for the connection test; 0 = loopback on one host.
    rtt_ms: Annotated[list[float], Field(min_length=1)] = [0]
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    table_size: Annotated[int, Field(gt=0)] = 10_000
    bulk_mb: Annotated[int, Field(gt=0, le=8192)] = 128
    # Shorter than at rest: a cell is one path, and a study has many.
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 1
    cell_budget_s: Annotated[float, Field(gt=0)] = 30

    @field_validator("key_types")
    @classmethod
    def known_key_types(cls, value: list[str]) -> list[str]:
        return _all_known(value, pki.KEY_TYPES, "TLS key type")

    @field_validator("tunnel_key_type")
    @classmethod
    def known_tunnel_key(cls, value: str) -> str:
        _all_known([value], tunnels.SSH_KEY_TYPES, "tunnel key type")
        return value

    @field_validator("ssh_ciphers")
    @classmethod
    def known_ssh_ciphers(cls, value: list[str]) -> list[str]:
        return _all_known(value, tunnels.SSH_CIPHERS, "SSH cipher")

    @field_validator("rtt_ms")
    @classmethod
    def delays_in_range(cls, value: list[float]) -> list[float]:
        for rtt in value:
            if not 0 <= rtt <= netns.MAX_DELAY_MS:
                raise ValueError(
                    f"round-trip time {rtt:g} ms is out of range; use 0 to "
                    f"{netns.MAX_DELAY_MS:g} ms"
                )
        return value


class Profile(Strict):
    name: str
    description: str = ""
    studies: Annotated[list[Study], Field(min_length=1)] = ["at-rest"]
    data: DataSpec = DataSpec()
    server: ServerSpec = ServerSpec()
    regime: RegimeSpec = RegimeSpec()
    measure: MeasureSpec = MeasureSpec()
    transit: TransitSpec = TransitSpec()


def builtin_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".toml")
        for p in resources.files("encbench.profiles").iterdir()
        if p.name.endswith(".toml")
    )


def _first_error(exc: ValidationError, origin: str) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "(top level)"
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = "unknown key; check its spelling against the built-in profiles"
    return f"{origin}: {where}: {message}"


def parse(text: str, origin: str) -> Profile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{origin}: not valid TOML: {exc}") from exc
    try:
        profile = Profile.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(_first_error(exc, origin)) from exc
    for section in ("measure", "transit"):
        rounds = getattr(profile, section)
        if rounds.min_rounds > rounds.max_rounds:
            raise BadInput(f"{origin}: {section}.min_rounds is larger than {section}.max_rounds")
    t = profile.transit
    if t.rate_mbit is not None and not any(rtt > 0 for rtt in t.rtt_ms):
        raise BadInput(
            f"{origin}: transit.rate_mbit limits the emulated link, which only rows with "
            "transit.rtt_ms > 0 use: add a distance or remove the rate"
        )
    if t.bulk_ciphers and t.tls_version != "TLSv1.2":
        raise BadInput(
            f'{origin}: transit.bulk_ciphers needs transit.tls_version = "TLSv1.2" '
            "(TLS 1.3 suites are not chosen by ssl_cipher)"
        )
    return profile


def load(name_or_path: str) -> tuple[Profile, str]:
    """Returns the profile and its TOML text (kept with the results for --resume)."""
    if name_or_path in builtin_names():
        text = resources.files("encbench.profiles").joinpath(f"{name_or_path}.toml").read_text()
        return parse(text, f"profile {name_or_path}"), text
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        try:
            text = path.read_text()
        except OSError as exc:
            raise BadInput(f"cannot read profile {path}: {exc.strerror}") from exc
        return parse(text, str(path)), text
    raise BadInput(
        f"unknown profile {name_or_path!r}: use one of {', '.join(builtin_names())} "
        "or the path of a .toml file"
    )
