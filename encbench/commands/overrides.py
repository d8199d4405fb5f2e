"""Settings given on the command line in sysbench's words, without writing TOML:
`--threads 1,8,64`, `--time SECONDS` (each run's length), `--tables N`, `--table-size N`.

Each is written into the profile's text, as `--target` is (servers/dsn.py), so that the
results directory's profile.toml is what was measured and `--resume` measures it again; the
line keeps a comment with the option and the value it replaced.  Where an option lands is
declared by the sections themselves (options.Strict.SYSBENCH): `[data]` takes the tables and
their size; each study the profile lists that drives sysbench (or pgbench) with client
threads and timed runs takes `--threads` and `--time` into its own keys, for each kind it
measures ([measure] threads and run_s, [transit] query_threads and run_s, [replication]
threads and run_s; PostgreSQL's [pg_at_rest] clients and run_s, [pg_transit] query_clients
and run_s).  A study whose section sizes its own data, or that times whole operations, keeps
its settings.  `--install NAME` is not sysbench's: it lands in [server] install
(servers/mariadb/installs.py), where the sandboxes' MariaDB comes from."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

import tomlkit

from encbench import studies
from encbench.errors import BadInput
from encbench.profiles.options import Strict, toml_value
from encbench.profiles.profile import Profile, parse

# The command line's options, by the word a section declares (options.Strict.SYSBENCH).
OPTIONS = ("threads", "time", "tables", "table-size", "install")
EXAMPLES = {
    "threads": "1,8,64",
    "time": "30",
    "tables": "8",
    "table-size": "100000",
    "install": "mariadb-11.8",
}
# Options whose value is a name, not whole numbers.
NAMED = frozenset({"install"})


@dataclass(frozen=True)
class Override:
    """One profile key the command line set: where, from what, to what."""

    option: str  # "--threads"
    key: str  # "measure.threads"
    before: Any  # the profile's value (its default where the profile left the key out)
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"option": self.option, "key": self.key, "from": self.before, "to": self.after}

    def words(self) -> str:
        return (
            f"{self.key} = {toml_value_of(self.after)} ({self.option}; the profile had "
            f"{toml_value_of(self.before)})"
        )


def toml_value_of(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_value(value)


def _whole_numbers(option: str, given: str) -> list[int]:
    values = []
    for part in given.split(","):
        try:
            values.append(int(part.strip()))
        except ValueError:
            raise BadInput(
                f"--{option} {given}: {part.strip()!r} is not a whole number; give "
                f"{'whole numbers separated by commas' if option == 'threads' else 'one'}, "
                f"e.g. --{option} {EXAMPLES[option]}"
            ) from None
    if option != "threads" and len(values) != 1:
        raise BadInput(
            f"--{option} {given}: give one whole number, e.g. --{option} {EXAMPLES[option]}"
        )
    return values


def values(given: dict[str, str | None]) -> dict[str, Any]:
    """The options given (option → its text), read: --threads a list, the others a number."""
    out: dict[str, Any] = {}
    for option, text in given.items():
        if text is None:
            continue
        if option in NAMED:
            out[option] = text.strip()
            continue
        numbers = _whole_numbers(option, text)
        out[option] = numbers if option == "threads" else numbers[0]
    return out


def _sections(profile: Profile) -> list[tuple[str, Strict]]:
    """The sections an option may land in: [data] and [server], then the section of each
    kind each listed study measures ([measure] for MariaDB's cells at rest, [pg_at_rest] for
    PostgreSQL's, ...): --threads reaches every kind's clients."""
    found: list[tuple[str, Strict]] = [("data", profile.data), ("server", profile.server)]
    for study in studies.named(profile):
        for measured in study.measured(profile):
            settings = measured.settings
            if settings.key is not None and settings.model is not None:
                found.append((settings.key, profile.section(settings.key, settings.model)))
    return found


def planned(profile: Profile, asked: dict[str, Any]) -> list[Override]:
    """Every key the options set in this profile, with the value it had."""
    out = []
    for option, after in asked.items():
        landed = [
            Override(f"--{option}", f"{section}.{key}", getattr(model, key), after)
            for section, model in _sections(profile)
            if (key := type(model).SYSBENCH.get(option)) is not None
        ]
        if not landed:
            names = ", ".join(profile.studies)
            raise BadInput(
                f"--{option}: no study of profile {profile.name} ({names}) runs sysbench with "
                f"it; remove --{option}, or set that study's own keys in a copy of the profile "
                "(docs/profiles.md)"
            )
        out += landed
    return out


def write(text: str, overrides: list[Override]) -> str:
    """The profile's text with each override written in, a comment saying so beside it."""
    doc = tomlkit.parse(text)
    for o in overrides:
        section, key = o.key.split(".")
        if section not in doc:
            doc.add(section, tomlkit.table())
        item = tomlkit.item(o.after)
        item.comment(f"{o.option}; the profile had {toml_value_of(o.before)}")
        doc[section][key] = item
    written = tomlkit.dumps(doc)
    read = tomllib.loads(written)
    for o in overrides:
        section, key = o.key.split(".")
        if read.get(section, {}).get(key) != o.after:
            # A layout tomlkit cannot edit in place: say where to set it instead.
            raise BadInput(f"{o.option}: cannot write {o.key} into this profile; set it there")
    return written


def apply(
    text: str, profile: Profile, given: dict[str, str | None], origin: str
) -> tuple[Profile, str, list[Override]]:
    """The profile with the options given (option → its text, None: not given) written in,
    checked as any profile is: a value out of range is named with its key and the range."""
    asked = values(given)
    if not asked:
        return profile, text, []
    overrides = planned(profile, asked)
    written = write(text, overrides)
    typed = " ".join(f"--{option} {given[option]}" for option in asked)
    return parse(written, f"{origin} with {typed}"), written, overrides
