"""`encbench profiles`: the built-ins a user chooses from, with the plan's time and what each
needs root for; the profiles for the tests run by name but are not listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench.commands import catalog, plan
from encbench.profiles import measured_runs
from encbench.profiles import profile as profiles
from tests.helpers import TESTS, encbench_here


def test_the_command_lists_every_listed_built_in_and_none_of_the_tests_profiles() -> None:
    result = encbench_here("profiles")
    assert result.returncode == 0, result.stderr
    names = {line.split()[0] for line in result.stdout.splitlines()[1:] if not line[0].isspace()}
    assert names == set(profiles.listed_names())
    assert not names & profiles.FOR_THE_TESTS
    assert "quick (default)" in result.stdout


def test_every_profile_for_the_tests_is_a_built_in_that_a_test_uses() -> None:
    """The hidden list holds no stale name, and no profile a user needs hides in it."""
    text = "\n".join(p.read_text() for p in TESTS.rglob("*.py") if p.name != "test_catalog.py")
    assert set(profiles.builtin_names()) >= profiles.FOR_THE_TESTS
    for name in profiles.FOR_THE_TESTS:
        assert f'"{name}' in text, f"no test uses profile {name}"


def test_the_tests_profiles_still_run_by_name_and_are_offered_for_a_typo() -> None:
    for name in profiles.FOR_THE_TESTS:
        prof, _ = profiles.load(name)
        assert prof.name == name
    assert profiles.did_you_mean("smoke-sts") == "smoke-sst"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("quik", "quick"), ("percona-2019", "percona-2019-decryption"), ("smoek", "smoke")],
)
def test_a_misspelt_profile_name_gets_the_built_in_it_most_likely_means(
    typed: str, meant: str
) -> None:
    assert profiles.did_you_mean(typed) == meant


def test_a_misspelt_former_name_is_offered_as_the_profile_it_became() -> None:
    former, current = next(iter(profiles.FORMER_NAMES.items()))
    assert profiles.did_you_mean(former[:-1]) == current


def test_nothing_like_any_profile_gets_no_guess() -> None:
    assert profiles.did_you_mean("zzzzzz") is None


@pytest.mark.parametrize("name", ["smoke", "operations", "galera-replication"])
def test_the_time_is_the_plans_estimate_of_every_study(name: str) -> None:
    prof, _ = profiles.load(name)
    whole = sum(p.measuring_s + p.setup_s for p in plan.study_plans(prof))
    assert catalog.estimated_s(prof) == pytest.approx(whole)
    assert catalog.entry(name).time.startswith(f"plan ≈ {max(1, round(whole / 60))} min")


def test_a_profile_run_whole_shows_that_runs_time_and_date_beside_the_plan() -> None:
    run = measured_runs.of("smoke")
    assert run is not None
    assert catalog.entry("smoke").time.endswith(
        f"; measured {measured_runs.clock(run.seconds)} ({run.date})"
    )
    # A profile never run whole, or changed since its run: the plan's estimate alone.
    assert catalog.time_words(1500.0, None) == "plan ≈ 25 min"


def test_root_is_what_the_profiles_studies_need_it_for() -> None:
    assert catalog.entry("smoke").root == "no"
    assert catalog.entry("alibaba-rds-tde-shapes").root == "yes (cgroups)"
    assert catalog.entry("galera-replication").root == "yes (network namespaces)"
    assert catalog.entry("percona-2017-sst").root == "yes (network namespaces)"
    # Optional parts: left out without root, not refused.
    assert catalog.entry("quick").root == "for the SST (else left out)"
    assert catalog.entry("percona-2013-ssl").root == "for the distances (else left out)"
    assert catalog.entry("in-transit").root == "no"  # loopback only


def test_a_profile_with_a_required_and_an_optional_root_need_says_yes(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'name = "p"\nstudies = ["at-rest", "state-transfer"]\n'
        '[[server.shapes]]\nname = "one"\ncpus = 1\n[state_transfer]\noptional = true\n'
    )
    prof, _ = profiles.load(str(path))
    assert catalog.root_words(prof) == "yes (cgroups)"
