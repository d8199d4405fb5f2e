"""Benchmark (not a test): is the connection-rate client (sysbench + connect.lua) fast enough
that it never limits what it measures?  Goal: at least 90% of the plain connection rate of a
bare C loop (connloop.c: mysql_real_connect, SELECT 1, mysql_close) on the same machine.

Both clients are run in interleaved rounds against one sandboxed server over plain TCP at 1
and at 4 threads; the result is the median of the per-round ratios Lua/C, so a drift of the
machine hits both alike.  Needs gcc and libmariadb-dev (scripts/setup-test-extras.sh).

    .venv/bin/python -m benchmarks.connect_client [--rounds 10] [--seconds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from encbench.workloads import connrate
from tests.net.sandbox import tcp_sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="encbench-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        with tcp_sandbox(root) as box:
            target, password = box.target, box.password
            binary = connrate.build_connloop(root)
            common = {"workdir": root, "password": password, "log": root / "client.log"}
            for threads in (1, 4):
                lua, c_loop = [], []
                for _ in range(args.rounds):
                    lua.append(
                        connrate.measure(
                            target, ssl=False, threads=threads, time_s=args.seconds, **common
                        ).per_s  # type: ignore[arg-type]
                    )
                    c_loop.append(
                        connrate.measure_connloop(
                            binary,
                            target,
                            ssl=False,
                            threads=threads,
                            time_s=float(args.seconds),
                            **common,  # type: ignore[arg-type]
                        ).per_s
                    )
                ratios = [a / b for a, b in zip(lua, c_loop, strict=True)]
                print(
                    f"{threads} thread(s), {args.rounds} rounds of {args.seconds} s: "
                    f"sysbench+connect.lua {statistics.median(lua):,.0f} conn/s, "
                    f"C loop {statistics.median(c_loop):,.0f} conn/s; "
                    f"Lua/C median {statistics.median(ratios):.1%} "
                    f"(min {min(ratios):.1%}, max {max(ratios):.1%})"
                )


if __name__ == "__main__":
    main()
