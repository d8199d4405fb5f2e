"""What every section of a profile shares: strict values, the paired rounds' settings, client
threads, and the one-line error a refused value gets.  A study's own section (its
`options.py`) is built from these; the profile (profile.py) composes the sections.

Every error is one line that names the key and the fix, e.g. `p.toml: measure.threads: 4 is
listed twice; list each value once`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

# The sandboxed servers' max_connections (servers/variants.py renders it; a test keeps the
# two equal).  Some are kept for encbench's own status and proof queries, and for
# disconnects the server has not finished yet when a connect test opens the next one.
SERVER_MAX_CONNECTIONS = 600
HARNESS_CONNECTIONS = 10
MAX_CLIENT_THREADS = SERVER_MAX_CONNECTIONS - HARNESS_CONNECTIONS


def toml_value(value: Any) -> str:
    """A value as it was written in the TOML file, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON's escapes are TOML's, and no control character can break the one line.
        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


def all_known(values: list[str], choices: Iterable[str], what: str) -> list[str]:
    for name in values:
        if name not in choices:
            raise ValueError(f"unknown {what} {name!r}; choose from {', '.join(choices)}")
    return values


class AcrossKeys(ValueError):
    """A problem between keys of one section, raised by its model validator.  The message
    names them as `{section}.key`: the error line names the section's place in the profile
    there (`measure.min_rounds`), and no location of its own before it."""

    def naming(self, section: str) -> str:
        return str(self).format(section=section)


class Strict(BaseModel):
    # strict: TOML has types, and "4" or true where a number belongs is a mistake to name,
    # not a value to coerce; an int is still a float.  No nan or inf: no setting means them.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
    # The command line's options in sysbench's words (`encbench run --threads`, overrides.py)
    # → the key of this section each sets; a section that takes none declares nothing.
    SYSBENCH: ClassVar[Mapping[str, str]] = {}

    @field_validator("*")
    @classmethod
    def no_repeats(cls, value: Any) -> Any:
        """Every list is a set of choices: a value twice would measure a cell twice."""
        if isinstance(value, list):
            seen: list[Any] = []
            for item in value:
                if item in seen:
                    raise ValueError(f"{toml_value(item)} is listed twice; list each value once")
                seen.append(item)
        return value


def _within_connections(threads: list[int]) -> list[int]:
    for n in threads:
        if n > MAX_CLIENT_THREADS:
            raise ValueError(
                f"{n} threads need {n} connections and the sandboxed server allows "
                f"{MAX_CLIENT_THREADS} client connections (max_connections = "
                f"{SERVER_MAX_CONNECTIONS}, {HARNESS_CONNECTIONS} kept for encbench); "
                f"use at most {MAX_CLIENT_THREADS}"
            )
    return threads


# One client connection per thread, all open at once on one server.
Threads = Annotated[
    list[Annotated[int, Field(gt=0)]], Field(min_length=1), AfterValidator(_within_connections)
]


class DataSpec(Strict):
    """The sysbench data (`[data]`); a study's section may size its own."""

    SYSBENCH: ClassVar[Mapping[str, str]] = {"tables": "tables", "table-size": "table_size"}

    tables: Annotated[int, Field(gt=0, le=1000)] = 4
    table_size: Annotated[int, Field(gt=0)] = 100_000


class Rounds(Strict):
    """Paired rounds and when a cell stops: every study's section has them (plan.StopRule)."""

    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 3
    run_s: Annotated[int, Field(ge=1, le=3600)] = 1
    # 12 rounds are 6 blocks: the fewest that give a 95% signed-rank interval (stats.py).
    # Fewer are allowed (the tests' tiny runs); such a cell reports no interval.
    min_rounds: Annotated[int, Field(ge=2, le=1000)] = 12
    max_rounds: Annotated[int, Field(ge=2, le=10000)] = 400
    target_halfwidth_pct: Annotated[float, Field(gt=0, le=50)] = 2.0
    cell_budget_s: Annotated[float, Field(gt=0)] = 85
    # A round whose runs shared the machine with more than this (other processes' and stolen
    # CPU, % of the machine) is measured again; see README "Interference" for the choice.
    interference_max_pct: Annotated[float, Field(gt=0, le=100)] = 10.0
    # "No difference beyond ±margin" needs the 90% interval within it (TOST).
    equivalence_margin_pct: Annotated[float, Field(gt=0, le=50)] = 2.0

    @model_validator(mode="after")
    def fewest_rounds_first(self) -> Self:
        if self.min_rounds > self.max_rounds:
            raise AcrossKeys(
                "{section}.min_rounds is larger than {section}.max_rounds; "
                "lower {section}.min_rounds or raise {section}.max_rounds"
            )
        return self


# pydantic's type errors: what was expected there.
_EXPECTED = {
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
}


def _type_fix(kind: str, given: Any) -> str:
    if kind == "list_type":
        return "put it in brackets, e.g. [1, 4]"
    if kind == "string_type":
        return 'put it in double quotes, e.g. "value"'
    if isinstance(given, str):
        return "write it without quotes"
    if isinstance(given, bool):
        return "write a number such as 1, not true or false"
    if kind == "int_type" and isinstance(given, float):
        return "write a whole number, without a decimal point"
    return "write a number such as 4" if kind != "bool_type" else "write true or false"


def _message(err: ErrorDetails) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key; check its spelling against the built-in profiles"
    if kind == "value_error":
        return str(err.get("ctx", {}).get("error", err["msg"]))
    if kind == "finite_number":
        return f"{toml_value(err['input'])} is not a finite number; give a finite value"
    if kind in _EXPECTED:
        given = err["input"]
        return f"expected {_EXPECTED[kind]}, got {toml_value(given)}; {_type_fix(kind, given)}"
    return str(err["msg"])


def _key(part: int | str) -> str:
    text = str(part)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def first_error(exc: ValidationError, origin: str) -> str:
    """The first of pydantic's errors as the one line encbench prints."""
    err = exc.errors()[0]
    where = ".".join(_key(part) for part in err["loc"]) or "(top level)"
    across = err.get("ctx", {}).get("error")
    if isinstance(across, AcrossKeys):
        return f"{origin}: {across.naming(where)}"
    return f"{origin}: {where}: {_message(err)}"
