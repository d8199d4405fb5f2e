"""The three ways a round can share the machine (machine/placement.py), measured against each other
by A/A calibration: `sequential`, `pinned` and `duet`, each an `encbench calibrate` of the
same small at-rest profile, in rotated order, `--reps` times, so that a change in the
machine's other load over the minutes falls on every mode alike.

    .venv/bin/python -m benchmarks.sharing [--reps 2] [--out DIR]

Per mode: the A/A noise floor (the median over cells of the per-round spread of the log
ratio of two identical plain servers), the median 95% half-width of a cell, the cells that
"differed" (false positives) and the machine's other load meanwhile (median interference of
the runs).  A benchmark, not a test: run it on an otherwise idle machine.  Each calibration
uses a private state directory, so the machine's own calibration file is left as it was.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

MODES = ("sequential", "pinned", "duet")
ENCBENCH = Path(sys.executable).parent / "encbench"

PROFILE = """\
name = "sharing-{mode}"
description = "A/A calibration of measure.sharing = {mode} (benchmarks/sharing.py)"
calibration = true

[data]
tables = 1
table_size = 20000

[measure]
workloads = ["oltp_point_select", "oltp_read_only"]
regimes = ["in-memory"]
threads = {threads}
warmup_s = 1
run_s = 1
min_rounds = 12
max_rounds = 12
cell_budget_s = 120
sharing = "{mode}"
"""


@dataclass(frozen=True)
class Calibrated:
    mode: str
    dir: str
    wall_s: float
    false_positives: int
    spreads_pct: list[float]  # per cell: the spread of its per-round log ratios
    halfwidths_pct: list[float]  # per cell: its 95% interval's half-width
    interference_pct: float  # the runs' median


def calibrate(mode: str, threads: list[int], out: Path, state: Path) -> Calibrated:
    profile = out.parent / f"sharing-{mode}.toml"
    profile.write_text(PROFILE.format(mode=mode, threads=json.dumps(threads)))
    started = time.monotonic()
    done = subprocess.run(
        [str(ENCBENCH), "calibrate", str(profile), "--out", str(out)],
        env={**os.environ, "XDG_STATE_HOME": str(state)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall_s = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{mode}: encbench calibrate failed:\n{done.stderr[-2000:]}")
    result = json.loads((out / "calibration.json").read_text())
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    tested = [c for c in result["cells"] if c["halfwidth_pct"] is not None]
    return Calibrated(
        mode=mode,
        dir=str(out),
        wall_s=round(wall_s, 1),
        false_positives=result["false_positives"],
        spreads_pct=[c["round_spread_pct"] for c in tested],
        halfwidths_pct=[c["halfwidth_pct"] for c in tested],
        interference_pct=statistics.median(r["interference_pct"] for r in runs),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--threads", default="1,4", help="thread counts, e.g. 1,4")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--out", type=Path, default=Path("results") / f"sharing-{stamp}")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    args.out.mkdir(parents=True, exist_ok=False)
    measured: list[Calibrated] = []
    with tempfile.TemporaryDirectory(prefix="encbench-sharing-state-") as state:
        for rep in range(args.reps):
            order = MODES[rep % len(MODES) :] + MODES[: rep % len(MODES)]
            for mode in order:
                m = calibrate(mode, threads, args.out / f"r{rep}-{mode}", Path(state))
                measured.append(m)
                print(
                    f"rep {rep} {mode}: per-round spread {statistics.median(m.spreads_pct):.1f}%, "
                    f"half-width ±{statistics.median(m.halfwidths_pct):.1f}%, "
                    f"{m.false_positives}/{len(m.spreads_pct)} differ, "
                    f"other load {m.interference_pct:.1f}%, {m.wall_s:.0f} s",
                    flush=True,
                )
                (args.out / "sharing.json").write_text(
                    json.dumps([asdict(x) for x in measured], indent=1)
                )
    print()
    print("| sharing | cells | per-round spread (median) | 95% half-width (median) "
          "| false positives | other load (median) | time |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for mode in MODES:
        mine = [m for m in measured if m.mode == mode]
        spreads = [s for m in mine for s in m.spreads_pct]
        widths = [w for m in mine for w in m.halfwidths_pct]
        print(
            f"| {mode} | {len(spreads)} | {statistics.median(spreads):.1f}% "
            f"| ±{statistics.median(widths):.1f}% "
            f"| {sum(m.false_positives for m in mine)}/{len(spreads)} "
            f"| {statistics.median(m.interference_pct for m in mine):.1f}% "
            f"| {sum(m.wall_s for m in mine):.0f} s |"
        )


if __name__ == "__main__":
    main()
