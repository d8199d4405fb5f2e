"""A workload's own cell budget in the at-rest study (`[measure] workload_budget_s`): a write
round is followed by the flush of its pages, so writes get the time an interval needs
without giving every read cell the same."""

from __future__ import annotations

import pytest

from encbench.commands import plan
from encbench.errors import BadInput
from encbench.profiles.profile import Profile, parse
from encbench.studies.at_rest.cells import cells
from encbench.studies.at_rest.options import measure_options


def a_profile(measure: str) -> Profile:
    return parse(
        'name = "budgets"\ndescription = "t"\n[data]\ntables = 1\ntable_size = 1000\n'
        f'[measure]\nregimes = ["in-memory"]\nthreads = [1]\nwarmup_s = 0\n{measure}',
        "p.toml",
    )


def test_a_workload_with_a_budget_of_its_own_runs_and_plans_by_it() -> None:
    profile = a_profile(
        'workloads = ["oltp_read_only", "oltp_write_only"]\ncell_budget_s = 40\n'
        "workload_budget_s = { oltp_write_only = 90 }\n"
    )
    spec = measure_options(profile)
    reads, writes = cells(profile)
    assert spec.for_cell(writes).cell_budget_s == 90
    assert spec.for_cell(reads) is spec and spec.for_cell(reads).cell_budget_s == 40
    (at_rest,) = plan.study_plans(profile)
    assert at_rest.cells_s == [40.0, 90.0]
    assert "(its own budget: 90 s)" in "\n".join(plan.lines(profile))


def test_a_budget_for_a_workload_the_profile_does_not_list_is_refused() -> None:
    with pytest.raises(BadInput, match="workload_budget_s gives oltp_insert a budget"):
        a_profile('workloads = ["oltp_read_only"]\nworkload_budget_s = { oltp_insert = 60 }\n')
