"""The two designs of the at-rest study measured against each other on the same cells:
two servers (encbench starts a plain and an encrypted one) against one server with two table
sets (`--target`: a user's server, `ENCRYPTED=NO` and `ENCRYPTED=YES` tables side by side).

    .venv/bin/python -m benchmarks.designs [--reps 1] [--out DIR]

A MariaDB server started here, outside encbench, plays the user's server: file_key_management
loaded, a TCP account with a password (handed to encbench in MYSQL_PWD, as a user would), and
a buffer pool that holds both table sets, so the in-memory cells are what both designs
measure.  Per repetition both designs run the same profile, in alternating order, so that a
change in the machine's other load over the minutes falls on both alike.  Per cell it prints
the TPS overhead each design found with its 95% interval, whether the two intervals overlap,
and the harness's own CPU (encbench and its tools, as a share of the machine).

A benchmark, not a test: run it on an otherwise idle machine.  Each run uses a private state
directory, so the machine's own calibration file is left as it was.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench.servers import keys
from encbench.servers.sandbox import SandboxServer
from encbench.servers.variants import EncryptionSpec, server_options

ENCBENCH = Path(sys.executable).parent / "encbench"
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


def users_server(root: Path, password: str) -> SandboxServer:
    """A server as a user would run one: a key plugin, an account with a password."""
    server = SandboxServer("users", root, use_cgroup=False)
    opts = server_options(
        "encrypted",
        EncryptionSpec(),
        server.paths,
        port=server.port,
        buffer_pool_mb=256,
        key_file=keys.key_file(keys.private_dir(root)),
        run_as_root=os.geteuid() == 0,
    )
    server.initialize(opts)
    server.start(opts)
    server.query(f"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{password}'")
    server.query(
        "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX "
        "ON `encbench\\_%`.* TO 'bench'@'127.0.0.1'"
    )
    server.query("GRANT PROCESS ON *.* TO 'bench'@'127.0.0.1'")
    return server


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


def run(design: str, rep: int, profile: Path, out: Path, env: dict[str, str], dsn: str) -> Measured:
    argv = [str(ENCBENCH), "run", str(profile), "--out", str(out)]
    if design == "per-table":
        argv += ["--target", dsn]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
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
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--out", type=Path, default=Path("results") / f"designs-{stamp}")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=False)
    profile = args.out / "designs.toml"
    profile.write_text(PROFILE)
    password = secrets.token_urlsafe(18)
    measured: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="encbench-designs-") as scratch:
        server = users_server(Path(scratch) / "users-server", password)
        try:
            dsn = f"mysql://bench@127.0.0.1:{server.port}/"
            env = {**os.environ, "MYSQL_PWD": password, "XDG_STATE_HOME": f"{scratch}/state"}
            for rep in range(args.reps):
                order = DESIGNS if rep % 2 == 0 else DESIGNS[::-1]
                for design in order:
                    m = run(design, rep, profile, args.out / f"r{rep}-{design}", env, dsn)
                    measured.append(m)
                    print(f"rep {rep} {design}: {m.wall_s:.0f} s, harness "
                          f"{m.harness_pct:.2f}% of the machine", flush=True)  # fmt: skip
                    (args.out / "designs.json").write_text(
                        json.dumps([asdict(x) for x in measured], indent=1)
                    )
        finally:
            server.destroy()
    print()
    print("| rep | cell | two servers: TPS overhead (95% CI) "
          "| one server, two table sets | intervals overlap |")  # fmt: skip
    print("|---|---|---|---|---|")
    for rep in range(args.reps):
        by = {m.design: m for m in measured if m.rep == rep}
        for cell, two in by["two-server"].tps_overhead.items():
            one = by["per-table"].tps_overhead.get(cell)
            print(f"| {rep} | {cell} | {shown(two)} | {shown(one)} | {overlap(two, one)} |")


if __name__ == "__main__":
    main()
