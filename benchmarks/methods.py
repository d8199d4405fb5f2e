"""Issue #9's yardstick: the at-rest method of today against the one the issue started from,
run on the same machine in alternating order, and every runs file analysed both ways.

    .venv/bin/python -m benchmarks.methods [--old 483f626] [--reps 2] [--load none|bursty]
                                           [--methods old,new[,new-duet]] [--out DIR]

The old method is encbench as it was when issue #9 was filed (commit 483f626 by default,
extracted with `git archive` into a temporary directory and run with this environment's
Python): rounds in A B, B A order on one pair of servers per regime, a 3 s warm-up, a
Student-t interval over the per-round log ratios, stopping as soon as that interval is within
the target from 5 rounds.  The new one is this checkout: blocks of two rounds in random
opposite orders on servers restarted before every block, Hodges–Lehmann with the Wilcoxon
interval over blocks, widened for autocorrelation, Stein's two-stage rule, rounds with
interference measured again.  Each runs its own built-in `quick` profile's at-rest part (the
same cells, data and 80 s budgets; `studies = ["at-rest"]`), with a private state directory.
`new-duet` is the new one with `measure.sharing = "duet"` (README, Statistics).  Per
repetition the arms run in rotated order, so a change of the machine over the minutes falls
on every arm alike.

Per results file it prints the median 95% half-width of the TPS cells under both analyses:
- old: Student-t over every complete round's log ratio, as the old version reported it;
- new: what this version reports for those runs (engine/rounds.py: the blocks that the rounds
  pair into, rounds with interference above the limit left out;
  engine/stopping_rule.py: their estimate).
So "the same runs, both analyses" and "both methods, run" come from one invocation.

`--load bursty` runs a reproducible other load beside every encbench run (two processes,
each spinning one CPU for Exp(1 s) and idling for Exp(3 s), seeded: it asks for a quarter of
the machine on average, in bursts; the runs recorded a median of 5–9% other load, a mean of
9–15%), the kind of shared machine the issue measured; it is ours, so it ends with the
benchmark.  A benchmark, not a test: run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from encbench import stats
from encbench.engine import rounds, stopping_rule
from encbench.profiles.profile import parse
from encbench.studies.at_rest.options import measure_options

REPO = Path(__file__).resolve().parents[1]
OLD_COMMIT = "483f626"  # the last commit before issue #9's work began
# Each arm: the tree it runs from, and the measure.sharing it adds to that tree's profile.
METHODS: dict[str, tuple[str, str | None]] = {
    "old": ("old", None),
    "new": ("new", None),
    "new-duet": ("new", "duet"),  # both variants at once, each on its own half of the CPUs
}


def extract(commit: str, into: Path) -> Path:
    """The tree of `commit`, without touching this checkout or its worktrees."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def at_rest_profile(tree: Path, method: str, sharing: str | None = None) -> str:
    """The tree's own built-in quick profile, its at-rest part only: [data] and [measure]
    as that version shipped them (and `sharing`, if given, added to [measure])."""
    profiles = tree / "encbench" / "profiles"
    # Built-in profiles moved into profiles/builtin/; an older version has them one up.
    found = profiles / "builtin" / "quick.toml"
    text = (found if found.exists() else profiles / "quick.toml").read_text()
    head = text.split("\n[transit]", 1)[0]
    lines = [
        f'name = "quick-at-rest-{method}"'
        if line.startswith("name =")
        else 'studies = ["at-rest"]'
        if line.startswith("studies =")
        else line
        for line in head.rstrip().splitlines()
    ]
    while lines and lines[-1].startswith("#"):
        lines.pop()  # the comment that introduced [transit]
    if "[measure]" not in lines or 'studies = ["at-rest"]' not in lines:
        raise SystemExit(f"{tree}: quick.toml is not shaped as expected; adapt at_rest_profile")
    if sharing is not None:
        lines.append(f'sharing = "{sharing}"')  # [measure] is the last section kept
    return "\n".join(lines) + "\n"


# One process of the bursty load: spin one CPU, then idle, for exponential times.
BURST = """
import random, sys, time
rng = random.Random(int(sys.argv[1]))
while True:
    time.sleep(rng.expovariate(1 / 3.0))
    end = time.monotonic() + rng.expovariate(1 / 1.0)
    while time.monotonic() < end:
        pass
"""


@contextlib.contextmanager
def bursty_load(seed: int, enabled: bool) -> Iterator[None]:
    workers = (
        [subprocess.Popen([sys.executable, "-c", BURST, str(seed * 10 + i)]) for i in range(2)]
        if enabled
        else []
    )
    try:
        yield
    finally:
        for w in workers:
            w.kill()
            w.wait()


@dataclass(frozen=True)
class Analysed:
    """One cell's TPS interval under both analyses."""

    cell: str
    rounds: int
    counted: int
    old_halfwidth_pct: float
    new_halfwidth_pct: float | None
    new_overhead_pct: float | None


@dataclass(frozen=True)
class Measured:
    method: str
    rep: int
    dir: str
    wall_s: float
    load: str
    interference_pct: float  # the runs' median: the machine's other load meanwhile
    cells: list[Analysed]

    def median(self, analysis: str) -> float:
        widths = [getattr(c, f"{analysis}_halfwidth_pct") for c in self.cells]
        return statistics.median(math.inf if w is None else w for w in widths)


def _interference_pct(run: dict[str, Any], cpus: int) -> float:
    """The new records carry it; the old ones have its parts (other processes' and stolen
    CPU over the run) and the machine's size."""
    if "interference_pct" in run:
        return float(run["interference_pct"])
    machine = float(run["wall_s"]) * cpus
    other = float(run.get("other_cpu_s", 0.0)) + float(run.get("steal_s", 0.0))
    return 100.0 * other / machine


def analyse(results: Path, rule: stopping_rule.StopRule) -> tuple[list[Analysed], float]:
    """Every at-rest cell of a results file, under both analyses; and the runs' median
    interference."""
    cpus = os.cpu_count() or 1
    runs = []
    for line in (results / "at-rest.jsonl").read_text().splitlines():
        raw = json.loads(line)
        cell = raw["cell"]
        fields = {**raw, "interference_pct": _interference_pct(raw, cpus)}
        fields["cell"] = (cell["regime"], cell["threads"], cell["workload"])
        runs.append(SimpleNamespace(**fields))
    cells = sorted({r.cell for r in runs})
    analysed = []
    for cell in cells:
        complete = rounds.complete_rounds(runs, cell)
        old = stats.t_ratio([r.log_ratio("tps") for r in complete], widen=False)
        state = rounds.cell_rounds(runs, cell, rule)
        new = stopping_rule.estimate(state.blocks, "tps", rule)
        new_width = new.halfwidth_pct if new and math.isfinite(new.halfwidth_pct) else None
        analysed.append(
            Analysed(
                cell=f"{cell[2]} {cell[0]} t{cell[1]}",
                rounds=len(complete),
                counted=2 * len(state.blocks),
                old_halfwidth_pct=round(old.halfwidth_pct, 2),
                new_halfwidth_pct=None if new_width is None else round(new_width, 2),
                new_overhead_pct=None if new is None else round(100 * (1 - new.ratio), 2),
            )
        )
    return analysed, statistics.median(r.interference_pct for r in runs)


def run_method(
    version: str, tree: Path, profile: Path, out: Path, state: Path
) -> tuple[float, int]:
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    if version == "old":
        env["PYTHONPATH"] = str(tree)  # ahead of this checkout's installed package
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "encbench", "run", str(profile), "--out", str(out)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    (out.parent / f"{out.name}.log").write_text(done.stdout + done.stderr)
    return time.monotonic() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--old", default=OLD_COMMIT, help="the commit of the old method")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--load", choices=("none", "bursty"), default="none")
    parser.add_argument("--methods", default="old,new", help=f"of {', '.join(METHODS)}")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--out", type=Path, default=Path("results") / f"methods-{stamp}")
    args = parser.parse_args()
    args.out = args.out.resolve()  # each version runs in its own tree
    arms = args.methods.split(",")
    if unknown := set(arms) - set(METHODS):
        parser.error(f"unknown methods {sorted(unknown)}: choose from {', '.join(METHODS)}")
    args.out.mkdir(parents=True, exist_ok=False)
    measured: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="encbench-methods-") as tmp:
        trees = {"old": extract(args.old, Path(tmp) / "old"), "new": REPO}
        profiles = {}
        for method in arms:
            tree, sharing = METHODS[method]
            profiles[method] = args.out / f"quick-at-rest-{method}.toml"
            profiles[method].write_text(at_rest_profile(trees[tree], method, sharing))
        # One rule to analyse every file by: the new quick's (its min_rounds make stage one).
        rule = measure_options(parse(at_rest_profile(REPO, "new"), "quick-at-rest-new"))
        for rep in range(args.reps):
            order = arms[rep % len(arms) :] + arms[: rep % len(arms)]
            for method in order:
                tree = METHODS[method][0]
                out = args.out / f"r{rep}-{method}"
                with bursty_load(rep, args.load == "bursty"):
                    # A state directory per tree: the sandbox registry's format changed.
                    state = Path(tmp) / f"state-{tree}"
                    wall_s, code = run_method(tree, trees[tree], profiles[method], out, state)
                if code != 0:
                    raise SystemExit(f"{method}: encbench run exited {code}; see {out}.log")
                cells, interference = analyse(out, rule)
                m = Measured(method, rep, str(out), round(wall_s, 1), args.load,
                             round(interference, 2), cells)  # fmt: skip
                measured.append(m)
                print(
                    f"rep {rep} {method}: median half-width, old analysis "
                    f"±{m.median('old'):.1f}%, new analysis ±{m.median('new'):.1f}%; "
                    f"other load {m.interference_pct:.1f}%, {m.wall_s:.0f} s",
                    flush=True,
                )
                (args.out / "methods.json").write_text(
                    json.dumps([asdict(x) for x in measured], indent=1)
                )
    print()
    print("| method (run) | runs | median half-width, old analysis | median half-width, "
          "new analysis | other load (median) | time |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for method in arms:
        mine = [m for m in measured if m.method == method]
        print(
            f"| {method} | {len(mine)} "
            f"| ±{statistics.median(m.median('old') for m in mine):.1f}% "
            f"| ±{statistics.median(m.median('new') for m in mine):.1f}% "
            f"| {statistics.median(m.interference_pct for m in mine):.1f}% "
            f"| {sum(m.wall_s for m in mine):.0f} s |"
        )
    for m in measured:
        print(f"\n{m.dir} ({m.method}, rep {m.rep}):")
        for c in m.cells:
            print(
                f"  {c.cell}: {c.rounds} rounds ({c.counted} in blocks), "
                f"old ±{c.old_halfwidth_pct:.1f}%, new "
                + ("no interval" if c.new_halfwidth_pct is None else f"±{c.new_halfwidth_pct:.1f}%")
            )


if __name__ == "__main__":
    main()
