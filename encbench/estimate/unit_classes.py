"""`--units-from LABEL=VALUE:FILE` with `--prometheus`: the unit costs of one class of hosts.
A team that measured units on a host of each hardware class (`encbench estimate
--measure-units` there) gives each class's units file, keyed by a label its instances carry
in Prometheus (`--units-from host_class=c5:units-c5.json --units-from
host_class=m6:units-m6.json`).  Each instance is then estimated with the units of its class,
and with this machine's where it has none of the classes given.

FILE is what --measure-units keeps on that host (its estimate-units.json), or the results
directory it ran.  All the classes name one label; a class no instance of the window has is
refused (a misspelt label or value would otherwise pass silently as this machine's units)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from encbench.errors import BadInput
from encbench.estimate import kinds, units
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Sample
from encbench.estimate.units import Unit

# LABEL=VALUE:FILE, LABEL as Prometheus spells a label name.
CLASS = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=([^:]+):(.+)$")


@dataclass(frozen=True)
class UnitClass:
    label: str
    value: str
    source: Path
    units: dict[str, Unit]

    @property
    def name(self) -> str:
        return f"{self.label}={self.value}"


def is_class(given: str) -> bool:
    """A LABEL=VALUE:FILE, not a results directory (one that exists is taken as one)."""
    return CLASS.match(given) is not None and not Path(given).exists()


def read_units(path: Path, given: str) -> dict[str, Unit]:
    """A units file as --measure-units keeps it, or a results directory's units."""
    if path.is_dir():
        return units.from_directory(path).units
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("schema") != units.MACHINE_FILE_SCHEMA:
            raise ValueError("not a units file")
        return {name: Unit.model_validate(unit) for name, unit in data["units"].items()}
    except OSError as exc:
        raise BadInput(
            f"--units-from {given}: cannot read {path}: {exc.strerror or exc}; give the "
            "estimate-units.json --measure-units kept on that host, or its results directory"
        ) from None
    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
        raise BadInput(
            f"--units-from {given}: {path} is not a units file (schema "
            f"{units.MACHINE_FILE_SCHEMA}); give the estimate-units.json --measure-units kept "
            "on that host, or its results directory"
        ) from None


def load(given: Sequence[str]) -> list[UnitClass]:
    """Every LABEL=VALUE:FILE read, refused in one line where it cannot be used."""
    found: list[UnitClass] = []
    for text in given:
        match = CLASS.match(text)
        if match is None:
            raise BadInput(f"--units-from {text}: write a class as LABEL=VALUE:FILE")
        label, value, file = match.groups()
        if found and label != found[0].label:
            raise BadInput(
                f"--units-from {text}: every class names one label ({found[0].label}), so that "
                "an instance has one class; give the others by the same label"
            )
        if any(c.value == value for c in found):
            raise BadInput(f"--units-from {text}: {label}={value} is given twice; give it once")
        found.append(UnitClass(label, value, Path(file), read_units(Path(file), text)))
    return found


def query(label: str, asked: Asked) -> str:
    """Each instance's value of the label over the window, one series per (instance, value)."""
    return (
        f"max by (instance, {label}) "
        f"(last_over_time({kinds.first().UP}{{{asked.matchers}}}[{asked.since_s:.0f}s]))"
    )


def of_instances(classes: Sequence[UnitClass], samples: Sequence[Sample]) -> dict[str, UnitClass]:
    """instance → its class; a class no instance has is refused."""
    by_value = {c.value: c for c in classes}
    label = classes[0].label
    found: dict[str, UnitClass] = {}
    seen: set[str] = set()
    for s in samples:
        value = s.labels.get(label)
        if value is None:
            continue
        seen.add(value)
        if value in by_value:
            found[s.labels.get("instance", "")] = by_value[value]
    absent = [c.name for c in classes if c.value not in seen]
    if absent:
        values = ", ".join(sorted(seen)[:10]) if seen else "none: no instance has the label"
        raise BadInput(
            f"--units-from {absent[0]}: no instance in the window has {label}="
            f"{absent[0].split('=', 1)[1]} (its values there: {values}); check the label "
            "and value, or leave it out"
        )
    return found
