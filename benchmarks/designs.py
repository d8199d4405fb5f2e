"""The two designs of the at-rest study measured against each other on the same cells:
two servers (encbench starts a plain and an encrypted one) against one server with two table
sets (`--target`: a user's server, `ENCRYPTED=NO` and `ENCRYPTED=YES` tables side by side).

    .venv/bin/python -m benchmarks.designs [--reps 1] [--remote] [--only DESIGN] [--out DIR]

The tests' user's server (tests/integration/users_server.py) plays the user's server:
file_key_management loaded, a TCP account with a password (handed to encbench in MYSQL_PWD,
as a user would), a buffer pool that holds both table sets, so the in-memory cells are what
both designs measure, and — with --remote, where namespaces can be made — another network
namespace 4 ms away (the delay relay), so the per-table runs and their harness CPU are
measured over a remote link.  Per repetition both designs run the same profile, in
alternating order, so that a change in the machine's other load over the minutes falls on
both alike.  Per cell it prints
the TPS overhead each design found with its 95% interval, whether the two intervals overlap,
and the harness's own CPU (encbench and its tools, as a share of the machine).

A benchmark, not a test: run it on an otherwise idle machine.  Each run uses a private state
directory, so the machine's own calibration file is left as it was.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.helpers import encbench
from tests.integration.users_server import PASSWORD, UsersServer, users_server

DESIGNS = ("two-server", "per-table")

# Reads and a write, in memory (a user's server cannot be restarted with another buffer
# pool, so the per-table design measures in-memory cells only), at 1 and 4 threads.
PROFILE = """\
name = "designs"
description = "the two-server and the per-table design on the same cells (benchmarks/designs.py)"

[data]
tables = 2
table_size = 20000

[measure]
workloads = ["oltp_point_select", "oltp_read_only", "oltp_write_only"]
regimes = ["in-memory"]
threads = [1, 4]
warmup_s = 2
run_s = 1
min_rounds = 12
max_rounds = 200
cell_budget_s = 45
"""


@dataclass(frozen=True)
class Measured:
    design: str
    rep: int
    dir: str
    wall_s: float
    harness_pct: float
    # per cell "workload t<threads>": (overhead %, low %, high %) of TPS, or None
    tps_overhead: dict[str, tuple[float, float, float] | None]


def overheads(summary: dict[str, Any]) -> dict[str, tuple[float, float, float] | None]:
    found: dict[str, tuple[float, float, float] | None] = {}
    for cell in summary["studies"]["at-rest"]["cells"]:
        tps = cell.get("comparisons", {}).get("tps")
        key = f"{cell['workload']} t{cell['threads']}"
        if tps is None or tps["overhead_ci_pct"] is None:
            found[key] = None
        else:
            low, high = tps["overhead_ci_pct"]
            found[key] = (tps["overhead_pct"], low, high)
    return found


def run(
    design: str, rep: int, profile: Path, out: Path, users: UsersServer, state: str
) -> Measured:
    """One design's run: the two-server design on this host, the per-table one from the
    user's client host (users.prefix) against the user's server."""
    per_table = design == "per-table"
    started = time.monotonic()
    done = encbench(
        "run", str(profile), "--out", str(out),
        *(("--target", users.dsn()) if per_table else ()),
        env={"MYSQL_PWD": PASSWORD, "XDG_STATE_HOME": state},
        prefix=users.prefix if per_table else (),
        timeout=3600,
    )  # fmt: skip
    wall_s = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{design}: encbench run failed:\n{done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return Measured(
        design=design,
        rep=rep,
        dir=str(out),
        wall_s=round(wall_s, 1),
        harness_pct=summary["studies"]["at-rest"]["harness"]["share_of_machine_pct"],
        tps_overhead=overheads(summary),
    )


def shown(value: tuple[float, float, float] | None) -> str:
    if value is None:
        return "no interval"
    over, low, high = value
    return f"{over:+.1f}% ({low:+.1f}…{high:+.1f})"


def overlap(a: tuple[float, float, float] | None, b: tuple[float, float, float] | None) -> str:
    if a is None or b is None:
        return "–"
    return "yes" if a[1] <= b[2] and b[1] <= a[2] else "**no**"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--remote", action="store_true", help="the user's server 4 ms away")
    parser.add_argument(
        "--only", choices=DESIGNS, help="one design (e.g. per-table --remote: the harness only)"
    )
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--out", type=Path, default=Path("results") / f"designs-{stamp}")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=False)
    profile = args.out / "designs.toml"
    profile.write_text(PROFILE)
    measured: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="encbench-designs-") as scratch:
        with users_server(Path(scratch), remote=args.remote, buffer_pool_mb=256) as users:
            for rep in range(args.reps):
                order = DESIGNS if rep % 2 == 0 else DESIGNS[::-1]
                order = tuple(d for d in order if args.only in (None, d))
                for design in order:
                    out = (args.out / f"r{rep}-{design}").absolute()
                    m = run(design, rep, profile.absolute(), out, users, f"{scratch}/state")
                    measured.append(m)
                    print(f"rep {rep} {design}: {m.wall_s:.0f} s, harness "
                          f"{m.harness_pct:.2f}% of the machine", flush=True)  # fmt: skip
                    (args.out / "designs.json").write_text(
                        json.dumps([asdict(x) for x in measured], indent=1)
                    )
        where = f"{users.rtt_ms:g} ms away" if users.rtt_ms else "on loopback"
    print(f"\nthe user's server was {where}")
    print()
    print("| rep | cell | two servers: TPS overhead (95% CI) "
          "| one server, two table sets | intervals overlap |")  # fmt: skip
    print("|---|---|---|---|---|")
    for rep in range(args.reps):
        by = {m.design: m for m in measured if m.rep == rep}
        cells = {c: None for m in by.values() for c in m.tps_overhead}
        for cell in cells:
            two = by["two-server"].tps_overhead.get(cell) if "two-server" in by else None
            one = by["per-table"].tps_overhead.get(cell) if "per-table" in by else None
            print(f"| {rep} | {cell} | {shown(two)} | {shown(one)} | {overlap(two, one)} |")


if __name__ == "__main__":
    main()
