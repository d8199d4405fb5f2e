"""Benchmark (not a test): whether an io-bound write run's whole-second stalls come from the
workload or from how a study runs it (a new client every second).

One sandboxed MariaDB with the at-rest study's options for a plain server and its io-bound
shape (a buffer pool a quarter of 8 × 100,000 rows, O_DIRECT, no binary log), sysbench's
workload at 16 threads, measured two ways over the same seconds: one continuous run that
reports each second's maximum latency (`--report-interval=1 --percentile=100`), and as many
one-second runs, each a new sysbench process with its own connections, without and with
the at-rest study's flush around each run (studies/at_rest/flushing.py: the page cleaner
told to write every dirty page, innodb_max_dirty_pages_pct = 0 at a high io_capacity, until
the pool is back to its dirty pages at the run's start; the settings restored after).  A
second whose maximum latency reaches 0.7 s counts as a stall.

    .venv/bin/python -m benchmarks.write_stalls [--workload oltp_update_index] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from pathlib import Path

from encbench.servers.local import free_port
from encbench.servers.mariadb import options as mariadb_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.studies.at_rest import flushing

STALL_MS = 700.0


def sysbench(box: SandboxServer, workload: str, *args: str) -> list[str]:
    return [
        "sysbench",
        workload,
        "--db-driver=mysql",
        f"--mysql-socket={box.paths.socket}",
        f"--mysql-user={box.user}",
        "--mysql-db=sbtest",
        "--tables=8",
        "--table-size=100000",
        "--rand-type=uniform",
        "--threads=16",
        "--percentile=100",
        *args,
    ]


def output(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="oltp_update_index")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--pool-mb", type=int, default=46)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="encbench-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        box = SandboxServer("stalls", root / "server", use_cgroup=False)
        # The at-rest study's own options for a plain server, binary log off.
        options = mariadb_options.common_options(
            box.paths,
            port=free_port(),
            buffer_pool_mb=args.pool_mb,
            run_as_root=os.geteuid() == 0,
            binlog=False,
        )
        box.initialize(options)
        box.start(options)
        try:
            box.query("CREATE DATABASE IF NOT EXISTS sbtest")
            output(sysbench(box, args.workload, "prepare"))
            # Both ways twice, alternating, so that neither has the warmer pool throughout.
            per_second: dict[str, list[float]] = {
                "continuous": [],
                "a new client each second": [],
                "a new client each second, flushed as the study does": [],
            }
            for _ in range(2):
                text = output(
                    sysbench(
                        box, args.workload, f"--time={args.seconds // 2}", "--report-interval=1",
                        "run",
                    )
                )  # fmt: skip
                per_second["continuous"] += [
                    float(m) for m in re.findall(r"lat \(ms,100%\): ([\d.]+)", text)
                ]
                for flushed in (False, True):
                    way = "a new client each second" + (
                        ", flushed as the study does" if flushed else ""
                    )
                    for _ in range(args.seconds // 2):
                        before = flushing.dirty_pages(box)
                        if flushed:
                            flushing.flush(box, box.cpu_counter)
                        text = output(sysbench(box, args.workload, "--time=1", "run"))
                        if flushed:
                            flushing.flush(box, box.cpu_counter, target=before)
                        found = re.search(r"max:\s+([\d.]+)", text)
                        per_second[way].append(float(found[1]) if found else 0)
        finally:
            box.stop()
            box.destroy()
    for way, maxima in per_second.items():
        stalls = sorted(round(m) for m in maxima if m >= STALL_MS)
        print(
            f"{args.workload}, 16 threads, {way}: {len(stalls)} of {len(maxima)} seconds "
            f"stalled (maximum latency ≥ {STALL_MS:g} ms){': ' if stalls else ''}"
            f"{', '.join(f'{s} ms' for s in stalls)}"
        )


if __name__ == "__main__":
    main()
