"""benchmarks/prometheus_fleet.py's synthetic fleet: its series must hold every step window
of the window the estimate asks once the backfill is done (when they ended at the backfill's
start, a backfill of ten minutes left the window's last two step windows empty and the
estimate said a gap of every instance), and its slices must be Prometheus's own blocks."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from benchmarks.prometheus_fleet import GAUGES, SLICE_S, Span, quiet, restarts, write_slice
from encbench.estimate.prometheus import Asked

MADE = 1_795_900_000  # any moment: the series are made then
LINE = re.compile(r"^(\S+\{[^}]*\}) (\d+) (\d+)$")


def _series(path: Path) -> dict[str, list[tuple[int, int]]]:
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        match = LINE.match(line)
        if match:
            found[match.group(1)].append((int(match.group(3)), int(match.group(2))))
    return found


def _written(tmp_path: Path, instances: int, span: Span) -> dict[str, list[tuple[int, int]]]:
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for n, (lo, hi) in enumerate(span.slices()):
        path = tmp_path / f"slice-{n}.om"
        write_slice(path, instances, span, lo, hi)
        assert path.read_text().endswith("# EOF\n")
        for name, samples in _series(path).items():
            found[name] += samples
    return found


def _step_windows_with_a_rate(times: list[int], asked: Asked) -> int:
    """The subquery's step windows (its points at multiples of the step in the window) in
    which rate(X[STEP]) has its two samples, as count_over_time counts them."""
    step = int(asked.step_s)
    first = int(asked.end - asked.since_s) // step * step
    points = [t for t in range(first, int(asked.end) + 1, step) if t >= asked.end - asked.since_s]
    return sum(1 for p in points if sum(1 for t in times if p - step <= t <= p) >= 2)


@pytest.mark.parametrize("backfill_s", [0, 10 * 60, 50 * 60])
def test_every_step_window_of_the_window_asked_after_the_backfill_holds_samples(
    tmp_path: Path, backfill_s: int
) -> None:
    span = Span.around(MADE, days=1, scrape_s=60)
    asked = Asked(end=MADE + backfill_s + 17, since_s=86400, step_s=300)
    series = _written(tmp_path, 2, span)
    assert len(series) == 2 * (11 + len(GAUGES) + 8)
    for name, samples in series.items():
        times = [t for t, _ in samples]
        assert times == sorted(set(times)), name
        assert _step_windows_with_a_rate(times, asked) >= asked.steps, name


def test_only_the_instances_made_to_restart_go_back_and_the_quiet_stay_still(
    tmp_path: Path,
) -> None:
    span = Span.around(MADE, days=1, scrape_s=300)
    series = _written(tmp_path, 26, span)
    for name, samples in series.items():
        instance = int(re.search(r'instance="db(\d+):', name).group(1))  # type: ignore[union-attr]
        values = [v for _, v in samples]
        backs = sum(1 for a, b in itertools.pairwise(values) if b < a)
        if "node_cpu" in name or not name.startswith("mysql_global_status_"):
            assert backs == 0, name
            continue
        assert backs == (1 if restarts(instance) and (values[-1] > 0 or "uptime" in name) else 0)
        if quiet(instance) and "uptime" not in name:
            assert set(values) == {0}, name
    assert restarts(0) and restarts(10) and quiet(25) and not restarts(25)


def test_the_slices_are_whole_block_ranges_without_overlap() -> None:
    span = Span.around(MADE, days=7, scrape_s=60)
    times = span.times()
    slices = span.slices()
    assert slices[0][0] == 0 and slices[-1][1] == len(times)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(slices))
    for lo, hi in slices:
        assert times[lo] // SLICE_S == times[hi - 1] // SLICE_S


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_makes_one_block_of_each_slice(tmp_path: Path) -> None:
    span = Span.around(MADE, days=3, scrape_s=600)
    data = tmp_path / "data"
    for n, (lo, hi) in enumerate(span.slices()):
        text = tmp_path / f"slice-{n}.om"
        write_slice(text, 3, span, lo, hi)
        subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet",
             f"--max-block-duration={SLICE_S // 3600}h", str(text), str(data)],
            check=True, capture_output=True,
        )  # fmt: skip
    assert len([d for d in data.iterdir() if (d / "meta.json").exists()]) == len(span.slices())
