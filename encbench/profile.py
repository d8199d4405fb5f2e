"""Profiles: what a study measures, as a TOML file validated field by field.

Built-in profiles live in encbench/profiles/*.toml; a user may pass a path instead.  Unknown
keys are refused (a typo must not silently fall back to a default) and every error names the
key, e.g. `measure.threads.0: must be > 0`.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from encbench.errors import BadInput
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


class MeasureSpec(Strict):
    workloads: Annotated[list[str], Field(min_length=1)] = ["oltp_read_only"]
    regimes: Annotated[list[Regime], Field(min_length=1)] = ["in-memory", "io-bound"]
    threads: Annotated[list[Annotated[int, Field(gt=0, le=4096)]], Field(min_length=1)] = [
        1,
        4,
        16,
        64,
    ]
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 3
    run_s: Annotated[int, Field(ge=1, le=3600)] = 1
    min_rounds: Annotated[int, Field(ge=2, le=1000)] = 5
    max_rounds: Annotated[int, Field(ge=2, le=10000)] = 400
    target_halfwidth_pct: Annotated[float, Field(gt=0, le=50)] = 2.0
    cell_budget_s: Annotated[float, Field(gt=0)] = 85

    @field_validator("workloads")
    @classmethod
    def known_workloads(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in OLTP_WORKLOADS:
                raise ValueError(
                    f"unknown workload {name!r}; choose from {', '.join(OLTP_WORKLOADS)}"
                )
        return value


class Profile(Strict):
    name: str
    description: str = ""
    data: DataSpec = DataSpec()
    server: ServerSpec = ServerSpec()
    regime: RegimeSpec = RegimeSpec()
    measure: MeasureSpec = MeasureSpec()


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
    if profile.measure.min_rounds > profile.measure.max_rounds:
        raise BadInput(f"{origin}: measure.min_rounds is larger than measure.max_rounds")
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
