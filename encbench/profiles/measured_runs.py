"""The whole runs of built-in profiles (measured_runs.toml): the one source of a profile's
measured time, beside the plan's estimate."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


def clock(seconds: int) -> str:
    """ "25 min 39 s", "15 min 9 s": as the findings page writes a whole run's time."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return (f"{hours} h " if hours else "") + f"{minutes} min {secs} s"


@dataclass(frozen=True)
class MeasuredRun:
    profile: str
    seconds: int
    date: str
    command: str
    machine: str


@cache
def all_runs() -> dict[str, MeasuredRun]:
    data = tomllib.loads(
        resources.files("encbench.profiles").joinpath("measured_runs.toml").read_text()
    )
    machines = data["machines"]
    return {
        name: MeasuredRun(
            name, int(run["seconds"]), run["date"], run["command"], machines[run["machine"]]
        )
        for name, run in data["runs"].items()
    }


def of(profile: str) -> MeasuredRun | None:
    return all_runs().get(profile)
