"""What every section of a profile shares: strict values, the paired rounds' settings, client
threads, and the one-line error a refused value gets.  A study's own section (its
`options.py`) is built from these; the profile (profiles/profile.py) composes the sections.

Every error is one line that names the key and the fix, e.g. `p.toml: measure.threads: 4 is
listed twice; list each value once`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, ClassVar, Self, Union, get_args, get_origin

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

from encbench.profiles.durations import RUN_OVERHEAD_S
from encbench.servers.sizing import HARNESS_CONNECTIONS, SERVER_MAX_CONNECTIONS

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


def known(choices: Collection[str], what: str) -> AfterValidator:
    """A list field's check, as its annotation, that every name in it is one of `choices`
    (all_known: an unknown one is refused with the choices)."""
    return AfterValidator(lambda values: all_known(values, choices, what))


def one_known(choices: Collection[str], what: str) -> AfterValidator:
    """A single name's check, as its field's annotation, that it is one of `choices` (as
    `known` checks a list's)."""
    return AfterValidator(lambda value: all_known([value], choices, what)[0])


def counts_within(top: int, what: str, why: str = "") -> AfterValidator:
    """A list field's check, as its annotation, that every count in it is from 1 to `top`:
    another is refused as "N `what` is out of range: `why`use 1 to `top`"."""

    def check(values: list[int]) -> list[int]:
        for n in values:
            if not 1 <= n <= top:
                raise ValueError(f"{n} {what} is out of range: {why}use 1 to {top}")
        return values

    return AfterValidator(check)


def budgets_listed(budgets: Iterable[str], listed: Iterable[str], key: str, list_key: str) -> None:
    """A budget of its own (`key`, by name) only for a name its list (`list_key`) runs: a
    budget of an unlisted one would never be used, so it is taken for a slip."""
    extra = [name for name in budgets if name not in listed]
    if extra:
        raise ValueError(
            f"{key} gives {extra[0]} a budget and {list_key} does not list it: "
            f"add {extra[0]} to {list_key}, or remove its budget"
        )


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
    # The command line's options in sysbench's words (`encbench run --threads`,
    # commands/overrides.py) → the key of this section each sets; a section that takes none
    # declares nothing.
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

    @property
    def rows(self) -> int:
        """Every row of every table."""
        return self.tables * self.table_size


# The bounds of Rounds' warm-up, run, rounds and cell budget, for a study's section that
# sets its own defaults of them.
WarmupSeconds = Annotated[int, Field(ge=0, le=3600)]
RunSeconds = Annotated[int, Field(ge=1, le=3600)]
MinRounds = Annotated[int, Field(ge=2, le=1000)]
MaxRounds = Annotated[int, Field(ge=2, le=10000)]
CellBudget = Annotated[float, Field(gt=0)]


class Rounds(Strict):
    """Paired rounds and when a cell stops: every study's section has them (plan.StopRule)."""

    warmup_s: WarmupSeconds = 3
    run_s: RunSeconds = 1
    # 12 rounds are 6 blocks: the fewest that give a 95% signed-rank interval (stats.py).
    # Fewer are allowed (the tests' tiny runs); such a cell reports no interval.
    min_rounds: MinRounds = 12
    max_rounds: MaxRounds = 400
    target_halfwidth_pct: Annotated[float, Field(gt=0, le=50)] = 2.0
    cell_budget_s: CellBudget = 85
    # A round whose runs shared the machine with more than this (other processes' and stolen
    # CPU, % of the machine) is measured again; see README "Interference" for the choice.
    interference_max_pct: Annotated[float, Field(gt=0, le=100)] = 10.0
    # "No difference beyond ±margin" needs the 90% interval within it (TOST).
    equivalence_margin_pct: Annotated[float, Field(gt=0, le=50)] = 2.0

    def for_cell(self, cell: object) -> Self:
        """The rule of one cell: the section's own, unless a study gives some of its cells a
        budget of their own (the state-transfer study's `method_budget_s`).  The engine, the
        plan and the report all ask for a cell's rule here, so that they agree."""
        return self

    @property
    def run_overhead_s(self) -> float:
        """What the plan takes a run to need beyond run_s (profiles/durations.py); a study whose
        runs take longer under some profiles says so (the at-rest study's MySQL)."""
        return RUN_OVERHEAD_S

    @property
    def block_s(self) -> float | None:
        """What the plan takes one block (its set-up and two rounds) to last, where the
        study knows it (durations.cell_seconds); None: rounds and warm-ups as they come."""
        return None

    def planned_rounds(self, cell: object) -> int | None:
        """The rounds the plan expects this cell to end at, where its study knows it stops
        before its budget or maximum rounds; None: one of those ends it
        (durations.cell_seconds)."""
        return None

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


def _message(err: ErrorDetails, model: type[BaseModel] | None) -> str:
    """pydantic's error in words: the bad value, and what would be accepted there."""
    kind = err["type"]
    given = err.get("input")
    ctx = err.get("ctx", {})
    if kind == "extra_forbidden":
        guess = _close(str(err["loc"][-1]), _keys_beside(model, err["loc"][:-1]))
        hint = f"did you mean {guess}? " if guess else ""
        return f"unknown key; {hint}check its spelling against the profile reference"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    if kind == "finite_number":
        return f"{toml_value(given)} is not a finite number; give a finite value"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {toml_value(given)}; {_type_fix(kind, given)}"
    if kind == "literal_error":
        return _not_a_choice(given, str(ctx.get("expected", "")))
    if kind in _BOUNDS:
        bounds, whole = _bounds_at(model, err["loc"])
        if not bounds:  # not found in the model: the one bound pydantic names
            bound = ctx[_BOUNDS[kind]]
            bounds, whole = {_BOUNDS[kind]: bound}, isinstance(given, int) and type(bound) is int
        return f"{toml_value(given)} is out of range; use {_range_words(bounds, whole)}"
    if kind == "too_short" and not given:
        return "the list is empty; list at least one value"
    if kind == "string_too_short" and not given:
        return '"" is empty; give a value'
    if kind == "missing":
        return "missing; add it (it has no default)"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a table of keys, got {toml_value(given)}; write it as a [section]"
    message = str(err["msg"])
    return f"{toml_value(given)} is refused: {message[:1].lower()}{message[1:]}"


_BOUNDS = {
    "greater_than": "gt",
    "greater_than_equal": "ge",
    "less_than": "lt",
    "less_than_equal": "le",
}


def _not_a_choice(given: Any, expected: str) -> str:
    """A value that is none of a fixed set, with the set and the nearest choice."""
    choices = re.findall(r"'([^']*)'", expected)
    guess = _close(str(given), choices)
    listed = ", ".join(toml_value(c) for c in choices)
    hint = f"did you mean {toml_value(guess)}? " if guess else ""
    return f"{toml_value(given)} is not one of the choices; {hint}choose from {listed}"


def _close(word: str, candidates: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _annotated(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """The type under Annotated[...] and `X | None`, with every constraint found on the way."""
    while True:
        if get_origin(annotation) is Annotated:
            base, *extra = get_args(annotation)
            for item in extra:
                metadata = [*metadata, *getattr(item, "metadata", [item])]
            annotation = base
        elif get_origin(annotation) in (Union, UnionType):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            if len(rest) != 1:
                return annotation, metadata
            annotation = rest[0]
        else:
            return annotation, metadata


def _walk(model: type[BaseModel] | None, loc: Sequence[int | str]) -> tuple[Any, list[Any]]:
    """The type at `loc` in the profile's model, and its constraints (None: not found)."""
    annotation: Any = model
    metadata: list[Any] = []
    for part in loc:
        annotation, _ = _annotated(annotation, [])
        if isinstance(part, str):
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return None, []
            field = annotation.model_fields.get(part)
            if field is None:
                return None, []
            annotation, metadata = _annotated(field.annotation, list(field.metadata))
        else:
            if get_origin(annotation) is not list:
                return None, []
            annotation, metadata = _annotated(get_args(annotation)[0], [])
    return annotation, metadata


def _keys_beside(model: type[BaseModel] | None, loc: Sequence[int | str]) -> list[str]:
    """The keys the table at `loc` has (for a misspelt key's nearest)."""
    annotation, _ = _walk(model, loc)
    annotation, _ = _annotated(annotation, [])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def _bounds_at(
    model: type[BaseModel] | None, loc: Sequence[int | str]
) -> tuple[dict[str, Any], bool]:
    """The bounds the model sets on the value at `loc` (gt, ge, lt, le: those it has), and
    whether the value is a whole number there."""
    annotation, metadata = _walk(model, loc)
    found: dict[str, Any] = {}
    for item in metadata:
        for name in _BOUNDS.values():
            value = getattr(item, name, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                found[name] = value
    return found, annotation is int


def _range_words(bounds: dict[str, Any], whole: bool) -> str:
    """The allowed range, as a user types it: "1 to 1000", "at least 1.2", "above 0"."""
    if whole:
        low = bounds["gt"] + 1 if "gt" in bounds else bounds.get("ge")
        high = bounds["lt"] - 1 if "lt" in bounds else bounds.get("le")
        if low is not None and high is not None:
            return f"{low} to {high}"
        return f"at least {low}" if low is not None else f"at most {high}"
    if "ge" in bounds and "le" in bounds:
        return f"{bounds['ge']:g} to {bounds['le']:g}"
    words = [
        f"{word} {bounds[name]:g}"
        for name, word in (("gt", "above"), ("ge", "at least"), ("lt", "below"), ("le", "at most"))
        if name in bounds
    ]
    return " and ".join(words)


def _key(part: int | str) -> str:
    text = str(part)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def first_error(exc: ValidationError, origin: str, model: type[BaseModel] | None = None) -> str:
    """The first of pydantic's errors as the one line encbench prints; `model`, the profile's
    model, gives the full range of a value out of it and the keys a misspelt one is near."""
    err = exc.errors()[0]
    where = ".".join(_key(part) for part in err["loc"]) or "(top level)"
    across = err.get("ctx", {}).get("error")
    if isinstance(across, AcrossKeys):
        return f"{origin}: {across.naming(where)}"
    return f"{origin}: {where}: {_message(err, model)}"
