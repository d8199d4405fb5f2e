"""One source for a profile's time: the plan's estimate, and the whole runs in
encbench/profiles/measured_runs.toml.  The README's table, `encbench profiles`, the profiles' own
comments, the study pages and the --help texts say those words or none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from encbench import cli
from encbench.commands import catalog
from encbench.profiles import measured_runs
from encbench.profiles import profile as profiles
from tests.helpers import REPO

ROOT = REPO
README = ROOT / "README.md"
# What the plan may be off a whole run by (set-up included): beyond it, fix the plan.
PLAN_TOLERANCE = 0.15
# Known, and left, each with why.
PLAN_OFF: dict[str, str] = {}


def readme_times() -> dict[str, str]:
    rows = {}
    for line in README.read_text().splitlines():
        if m := re.match(r"^\| `([a-z0-9-]+)`(?: \(default\))? \|", line):
            rows[m.group(1)] = [c.strip() for c in line.strip("|").split(" | ")][3]
    return rows


def test_the_readme_table_shows_each_profiles_time_from_the_one_source() -> None:
    rows = readme_times()
    assert set(rows) == set(profiles.listed_names())
    for name, words in rows.items():
        assert words == catalog.profile_time_words(name), (
            f"README's time for {name}: regenerate the table's time column from "
            "catalog.profile_time_words (encbench/profiles/measured_runs.toml and the plan)"
        )


def test_encbench_profiles_shows_the_same_words() -> None:
    result = CliRunner().invoke(cli.main, ["profiles"])
    assert result.exit_code == 0
    for name in profiles.listed_names():
        assert catalog.profile_time_words(name) in result.output, name


def test_every_measured_run_is_of_a_listed_profile_and_in_the_findings() -> None:
    findings = (ROOT / "docs" / "findings.md").read_text()
    for name, run in measured_runs.all_runs().items():
        assert name in profiles.listed_names(), name
        assert measured_runs.clock(run.seconds) in findings, (name, run.seconds)
        assert re.fullmatch(r"2026-\d\d-\d\d", run.date)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=pytest.mark.xfail(reason=PLAN_OFF[n], strict=True) if n in PLAN_OFF else (),
        )
        for n in sorted(measured_runs.all_runs())
    ],
)
def test_the_plan_is_within_15_percent_of_a_whole_run(name: str) -> None:
    prof, _ = profiles.load(name)
    planned = catalog.estimated_s(prof)
    measured = measured_runs.all_runs()[name].seconds
    assert abs(planned - measured) <= PLAN_TOLERANCE * measured, (planned, measured)


# A whole profile's time written by hand: "measured whole in", "took 27 min 5 s", "about
# 19 min by the budgets", "planned at", "≤ 15 min".
HAND_WRITTEN = re.compile(
    r"measured whole|[Pp]lanned (at|by)|by (its|the) budgets|took \*?\*?\d+ min|"
    r"\d+ min \d+ s measured|≤ \d+ min"
)


def places() -> list[Path]:
    listed = [
        ROOT / "encbench" / "profiles" / "builtin" / f"{n}.toml" for n in profiles.listed_names()
    ]
    docs = [*(ROOT / "docs" / "studies").glob("*.md"), ROOT / "docs" / "method.md"]
    return [*listed, *docs, ROOT / "docs" / "profiles.md", README, ROOT / "encbench" / "cli.py"]


def test_no_page_or_profile_writes_a_profiles_time_by_hand() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in places()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HAND_WRITTEN.search(line)
    ]
    assert not found, "\n".join(found)
