"""`encbench profiles`: the built-in profiles a user chooses from, each with what it
measures, its studies, how long it takes by the plan's estimate and whether it needs root.

The time is `plan`'s estimate of the measuring (every cell until its budget or its maximum
rounds), with every study counted: a study this machine would leave out still belongs to
the profile; and, where the profile was measured whole, that run's time and date
(measured_runs.toml).  The README's table shows the same words (`time_words`, held to it by
tests/commands/test_times.py).  Root is what the studies say they need it for under the profile
(StudyDefinition.root), not whether this process has it."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from encbench import studies
from encbench.commands import plan
from encbench.profiles import measured_runs
from encbench.profiles import profile as profiles
from encbench.profiles.measured_runs import MeasuredRun
from encbench.profiles.profile import Profile

INDENT = "    "  # a profile's description, under its line


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    studies: list[str]
    seconds: float  # the plan's estimate of the measuring
    root: str  # "no", "yes (…)", or what a run without root leaves out
    measured: MeasuredRun | None = None  # a whole run of it, where there was one

    @property
    def time(self) -> str:
        return time_words(self.seconds, self.measured)


def time_words(planned_s: float, measured: MeasuredRun | None) -> str:
    """The plan's estimate (whole minutes: an estimate, not a measurement), and a whole run's
    time and date where there was one: "plan ≈ 26 min; measured 25 min 39 s (2026-11-26)"."""
    words = f"plan ≈ {max(1, round(planned_s / 60))} min"
    if measured is not None:
        words += f"; measured {measured_runs.clock(measured.seconds)} ({measured.date})"
    return words


def profile_time_words(name: str) -> str:
    prof, _ = profiles.load(name)
    return time_words(estimated_s(prof), measured_runs.of(name))


def estimated_s(profile: Profile) -> float:
    """The plan's estimate of the whole profile, whatever this machine would leave out."""
    return sum(p.whole_s for p in plan.study_plans(profile))


def root_words(profile: Profile) -> str:
    needs = [need for s in studies.named(profile) if (need := s.here.root(profile)) is not None]
    refused = sorted({n.what for n in needs if n.without is None})
    if refused:
        return f"yes ({', '.join(refused)})"
    left_out = [n.without for n in needs if n.without is not None]
    return f"for {' and '.join(left_out)} (else left out)" if left_out else "no"


def entry(name: str) -> Entry:
    prof, _ = profiles.load(name)
    return Entry(
        name=prof.name,
        description=prof.description,
        studies=list(prof.studies),
        seconds=estimated_s(prof),
        root=root_words(prof),
        measured=measured_runs.of(prof.name),
    )


def entries() -> list[Entry]:
    """Every listed built-in profile, the default first, then by name."""
    names = profiles.listed_names()
    names.sort(key=lambda n: (n != profiles.DEFAULT_PROFILE, n))
    return [entry(n) for n in names]


def lines(found: list[Entry]) -> list[str]:
    """One line per profile (name, time, root, studies), its description indented below."""
    header = ("PROFILE", "TIME", "ROOT", "STUDIES")
    rows = [
        (e.name + (" (default)" if e.name == profiles.DEFAULT_PROFILE else ""), e.time, e.root)
        for e in found
    ]
    widths = [max(len(r[i]) for r in [header[:3], *rows]) for i in range(3)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, [*widths, 0], strict=True)).rstrip()]
    for e, row in zip(found, rows, strict=True):
        cols = [c.ljust(w) for c, w in zip(row, widths, strict=True)]
        out.append("  ".join([*cols, ", ".join(e.studies)]))
        out += textwrap.wrap(e.description, 96, initial_indent=INDENT, subsequent_indent=INDENT)
    return out
