"""Benchmark (not a test): the connection rate through an SSH tunnel that holds a terminal
session (`ssh -tt -L … sleep`, encbench's default) against one that only forwards
(`ssh -N -L`).  OpenSSH sets TCP_NODELAY only for interactive sessions; without it, the small
packets of a MariaDB connect wait for delayed ACKs.

    .venv/bin/python -m benchmarks.ssh_nodelay [--rounds 5] [--seconds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from encbench.net import tunnels
from encbench.servers.target import Connection
from encbench.workloads import connrate
from tests.net.sandbox import tcp_sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--cipher", default="aes128-ctr")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="encbench-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        with tcp_sandbox(root) as box:
            target, password = box.target, box.password
            db = (target.host, target.port)
            for threads in (1, 4):
                rates: dict[bool, list[float]] = {True: [], False: []}
                for _ in range(args.rounds):
                    for terminal in (True, False):
                        with tunnels.ssh_tunnel(
                            root, db=db, cipher=args.cipher, terminal=terminal
                        ) as tunnel:
                            through = Connection.tcp("127.0.0.1", tunnel.port, "bench", "sbtest")
                            rates[terminal].append(
                                connrate.measure(
                                    through,
                                    ssl=False,
                                    threads=threads,
                                    time_s=args.seconds,
                                    workdir=root,
                                    password=password,
                                    log=root / "client.log",
                                ).per_s
                            )
                print(
                    f"{threads} thread(s), {args.cipher}, median of {args.rounds}: "
                    f"ssh -tt (terminal session) {statistics.median(rates[True]):,.0f} conn/s, "
                    f"ssh -N {statistics.median(rates[False]):,.0f} conn/s"
                )


if __name__ == "__main__":
    main()
