"""`encbench estimate --prometheus` at a fleet's scale: synthetic mysqld_exporter and
node_exporter series for N instances over D days, backfilled into a fresh Prometheus data
directory with `promtool tsdb create-blocks-from openmetrics`, then Prometheus started on it
(a free loopback port, stopped by pid) and the estimate asked of it, timed, with the peak
memory of encbench and of Prometheus.

    .venv/bin/python -m benchmarks.prometheus_fleet [--instances 10 100 1000] [--days 1 7]
        [--scrape-s 60] [--out DIR]

The aim: 1,000 instances over 7 days answered within 60 s and 1 GiB, the reduction done by
Prometheus's queries.  A benchmark, not a test: it writes gigabytes (the openmetrics text is
made and converted 100 instances at a time, then deleted) and keeps a core busy for many
minutes, so run it on an otherwise idle machine.  The series are counters that grow at a
steady rate with a daily swing and a restart on one instance in ten, so that the answer
holds gaps, resets and quiet instances as a real fleet's does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from encbench.estimate import units
from encbench.servers.sandbox import free_port
from tests import estimate_helpers

ENCBENCH = Path(sys.executable).parent / "encbench"
CHUNK = 100  # instances per openmetrics file
# Per instance: its counters' steady rates per second (the busiest instance; others less).
RATES = {
    "innodb_pages_read": 400.0,
    "innodb_pages_written": 150.0,
    "innodb_os_log_written": 2e6,
    "binlog_bytes_written": 1e6,
    "connections": 3.0,
    "ssl_finished_accepts": 0.0,
    "bytes_sent": 8e6,
    "bytes_received": 1e6,
    "innodb_num_pages_decrypted": 0.0,
    "innodb_num_pages_encrypted": 0.0,
}


@dataclass
class Result:
    instances: int
    days: int
    samples: int
    backfill_s: float
    estimate_s: float
    encbench_max_rss_mib: float
    prometheus_max_rss_mib: float
    exit_status: int
    instances_answered: int
    notes: int  # instances with a gap, restart or no traffic said


def _write_chunk(path: Path, first: int, count: int, start: int, end: int, scrape_s: int) -> int:
    """Openmetrics text of instances first..first+count-1; the samples written."""
    written = 0
    with open(path, "w") as out:
        for name in [*RATES, "uptime"]:
            # mysqld_exporter's status series are untyped, named without _total.
            out.write(f"# TYPE mysql_global_status_{name} unknown\n")
            for i in range(first, first + count):
                scale = 1.0 / (1 + i % 50)  # one instance in fifty at full rate
                restart_at = start + (end - start) // 2 if i % 10 == 0 else None
                value = 0.0
                for t in range(start, end, scrape_s):
                    swing = 1.0 + 0.5 * math.sin(2 * math.pi * t / 86400)
                    if restart_at is not None and restart_at <= t < restart_at + scrape_s:
                        value = 0.0
                    if name == "uptime":
                        value = float(t - (restart_at if restart_at and t >= restart_at else start))
                    elif i % 25 != 0:  # one in 25 has no traffic
                        value += RATES[name] * scale * swing * scrape_s
                    out.write(
                        f'mysql_global_status_{name}{{instance="db{i}:9104",job="mysql"}} '
                        f"{value:.0f} {t}\n"
                    )
                    written += 1
        out.write("# TYPE node_cpu_seconds counter\n")
        for i in range(first, first + count):
            for cpu in range(4):
                for mode, share in (("idle", 0.6), ("user", 0.4)):
                    for t in range(start, end, scrape_s):
                        out.write(
                            f'node_cpu_seconds_total{{instance="db{i}:9100",cpu="{cpu}",'
                            f'mode="{mode}"}} {share * (t - start):.0f} {t}\n'
                        )
                        written += 1
        out.write("# EOF\n")
    return written


def backfill(data: Path, scratch: Path, instances: int, days: int, scrape_s: int) -> int:
    end = int(time.time()) // scrape_s * scrape_s
    start = end - days * 86400
    samples = 0
    for first in range(0, instances, CHUNK):
        text = scratch / f"chunk-{first}.om"
        samples += _write_chunk(text, first, min(CHUNK, instances - first), start, end, scrape_s)
        subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(text), str(data)],
            check=True,
            capture_output=True,
        )
        text.unlink()
    return samples


def _max_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(instances: int, days: int, scrape_s: int, scratch: Path) -> Result:
    data = scratch / f"data-{instances}-{days}"
    started = time.monotonic()
    samples = backfill(data, scratch, instances, days, scrape_s)
    backfill_s = time.monotonic() - started
    port = free_port()
    config = scratch / "prometheus.yml"
    config.write_text("global: {scrape_interval: 1m}\nscrape_configs: []\n")
    server = subprocess.Popen(
        [
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        state = scratch / "state"
        os.environ["XDG_STATE_HOME"] = str(state)
        units.write_machine(estimate_helpers.typical())
        started = time.monotonic()
        child = subprocess.Popen(
            [str(ENCBENCH), "estimate", "--prometheus", url, "--since", f"{days}d",
             "--json", str(scratch / f"fleet-{instances}-{days}.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        estimate_s = time.monotonic() - started
        report = scratch / f"fleet-{instances}-{days}.json"
        answered = json.loads(report.read_text())["instances"] if report.exists() else []
        return Result(
            instances=instances,
            days=days,
            samples=samples,
            backfill_s=backfill_s,
            estimate_s=estimate_s,
            encbench_max_rss_mib=usage.ru_maxrss / 1024,
            prometheus_max_rss_mib=_max_rss_mib(server.pid),
            exit_status=os.waitstatus_to_exitcode(status),
            instances_answered=len(answered),
            notes=sum(1 for i in answered if i["notes"]),
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--days", type=int, nargs="+", default=[1, 7])
    parser.add_argument("--scrape-s", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            sys.exit(f"benchmark: {tool} not installed: run scripts/setup-test-extras.sh")
    results = []
    with tempfile.TemporaryDirectory(prefix="encbench-prom-fleet-") as scratch:
        for days in args.days:
            for instances in args.instances:
                result = measure(instances, days, args.scrape_s, Path(scratch))
                print(json.dumps(asdict(result)), flush=True)
                results.append(asdict(result))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "prometheus_fleet.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
