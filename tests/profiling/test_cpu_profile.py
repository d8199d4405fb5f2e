"""What the at-rest study makes of a CPU profile: the extra CPU by group of a cell, the
profile switch's bad input, and pagecrypt's measure of the cipher per page."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.profiles.profile import parse
from encbench.studies.at_rest import cost_profile
from encbench.studies.at_rest.records import CellKey
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "perf"


def test_a_profile_that_could_not_be_measured_says_why() -> None:
    cell = CellKey("oltp_read_only", "io-bound", 2)
    why = "`perf record -e cpu-clock` failed here (kernel.perf_event_paranoid = 3; …)"
    p = cost_profile.cost_profile({"unavailable": why, "cells": {}}, cell)
    assert p is not None and p.unavailable == why
    failed = {"unavailable": None, "cells": {cell.slug: {"error": "perf record exited"}}}
    p = cost_profile.cost_profile(failed, cell)
    assert p is not None and p.unavailable == "the profiled run failed: perf record exited"
    assert cost_profile.cost_profile(None, cell) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("profile_cpu = 1", "measure.profile_cpu: expected true or false, got 1"),
        ('profile_cpu = "yes"', "measure.profile_cpu: expected true or false"),
        ("profile_cpu_s = 0", "measure.profile_cpu_s: 0 is out of range; use 1 to 600"),
        ("profile_cpu_hz = 99", "measure.profile_cpu_hz: unknown key"),
    ],
)
def test_the_profile_switch_refuses_bad_values_by_name(line: str, message: str) -> None:
    with pytest.raises(BadInput, match=message.replace("(", r"\(")):
        parse(f'name = "p"\n[measure]\n{line}\n', "p.toml")


def test_pagecrypt_output_is_read_per_pattern() -> None:
    from encbench.workloads import pagecrypt

    text = (
        "pattern=per-page pages=98048 seconds=0.300128 us_per_page=3.0610\n"
        "pattern=reused pages=122816 seconds=0.300073 us_per_page=2.4433\n"
    )
    per_page, reused = pagecrypt.parse(text, "ctr", "decrypt", True)
    assert (per_page.pattern, per_page.pages, per_page.us_per_page) == ("per-page", 98048, 3.061)
    assert reused.us_per_page == pytest.approx(2.4433)
    with pytest.raises(ValueError, match="no per-page and reused"):
        pagecrypt.parse("pattern=reused pages=1 seconds=1 us_per_page=1\n", "ctr", "decrypt", True)


def test_pagecrypt_compiles_and_measures_both_patterns(tmp_path: Path) -> None:
    """The real C reference against the real libcrypto (figures not asserted: timing)."""
    from encbench import proc
    from encbench.workloads import pagecrypt

    if proc.which("cc") is None or not Path("/usr/include/openssl/evp.h").exists():
        pytest.skip(pagecrypt.CC_HINT)
    binary = pagecrypt.build(tmp_path)
    text = proc.run([str(binary), "cbc", "decrypt", "0.01"], phase="t", timeout_s=60).stdout
    found = pagecrypt.parse(text, "cbc", "decrypt", True)
    assert all(p.pages > 0 and p.us_per_page > 0 for p in found)
