"""`encbench estimate --prometheus` at a fleet's scale: synthetic mysqld_exporter and
node_exporter series for N instances over D days, backfilled into a fresh Prometheus data
directory with `promtool tsdb create-blocks-from openmetrics`, then Prometheus started on it
(a free loopback port, stopped by pid) and the estimate asked of it, timed, with the peak
memory of encbench and of Prometheus; a table of the runs at the end.

    .venv/bin/python -m benchmarks.prometheus_fleet [--instances 10 100 1000] [--days 1 7]
        [--scrape-s 60] [--out DIR]

The aim: 1,000 instances over 7 days answered within 60 s and 1 GiB, the reduction done by
Prometheus's queries.  A benchmark, not a test: the series are written as openmetrics text
one 54 h slice of every instance at a time (two at once: gigabytes of text at 1,000
instances, each deleted once converted), and it keeps both cores busy for minutes, so run
it on an otherwise idle machine.  The series are counters that grow at a steady rate with
a daily swing and a restart on one instance in ten, so that the answer holds resets and
quiet instances as a real fleet's does; they are scraped once a minute (Prometheus's
default), and run an hour past their making so the window asked finds them whole."""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import numpy as np

from encbench.estimate import units
from encbench.servers.local import free_port
from tests import estimate_helpers

ENCBENCH = Path(sys.executable).parent / "encbench"
# Prometheus's block ranges are 2 h × 3^k up to a tenth of its retention (30 d here: 54 h):
# one slice of the series per 54 h range is one block that Prometheus leaves as it is.
SLICE_S = 54 * 3600
WORKERS = 2  # slices written and converted at once (this is a 2-core machine's benchmark)
# The series run this far past their making, so that the window the estimate asks after the
# backfill (which takes minutes) ends inside them: a window ending after the series has
# step windows without samples, a gap the estimate says of every instance.
AHEAD_S = 3600
KINDS = 50  # instance i behaves as instance i % 50 (its rate scale, restart, quiet)
CPUS = 4  # node_exporter's CPUs per host
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
# The gauges the estimate reads too, each constant: the exporter's reach of its server, the
# settings of SHOW GLOBAL VARIABLES it shows as numbers, and the server's version.
GAUGES = {
    "mysql_up": ("", 1),
    "mysql_version_info": (',version="10.11.6-MariaDB",version_comment="MariaDB Server"', 1),
    "mysql_global_variables_innodb_encrypt_tables": ("", 0),
    "mysql_global_variables_innodb_encrypt_log": ("", 0),
    "mysql_global_variables_encrypt_binlog": ("", 0),
    "mysql_global_variables_log_bin": ("", 1),
    "mysql_global_variables_have_ssl": ("", 1),
    "mysql_global_variables_require_secure_transport": ("", 0),
}


@dataclass
class Result:
    instances: int
    days: int
    samples: int
    backfill_s: float  # wall clock, the slices written and converted two at a time
    write_s: float  # of which the openmetrics text's writing, summed over the slices
    promtool_s: float  # and promtool's converting it, summed over the slices
    data_mib: float  # the blocks on disk
    text_mib: float  # the largest openmetrics file at once (two exist at a time)
    estimate_s: float
    encbench_max_rss_mib: float
    prometheus_max_rss_mib: float
    exit_status: int
    instances_answered: int
    notes: int  # instances with a gap, restart or no traffic said
    notes_expected: int  # the instances made to restart or to stay quiet


@dataclass(frozen=True)
class Span:
    """The series' times: from `start` to `end` (Unix s, both included) every `scrape_s`."""

    start: int
    end: int
    scrape_s: int

    @classmethod
    def around(cls, made: int, days: int, scrape_s: int, ahead_s: int = AHEAD_S) -> Span:
        """The span a window of `days` asked up to `ahead_s` after `made` finds whole."""
        end = (made + ahead_s) // scrape_s * scrape_s
        start = (made - days * 86400 - ahead_s) // scrape_s * scrape_s
        return cls(start=start, end=end, scrape_s=scrape_s)

    def times(self) -> np.ndarray:
        return np.arange(self.start, self.end + 1, self.scrape_s, dtype=np.int64)

    def restart_at(self) -> int:
        return (self.start + (self.end - self.start) // 2) // self.scrape_s * self.scrape_s

    def slices(self) -> list[tuple[int, int]]:
        """Index ranges [lo, hi) of times(), one per SLICE_S block of Prometheus's."""
        times = self.times()
        edges = range(self.start // SLICE_S * SLICE_S + SLICE_S, self.end + 1, SLICE_S)
        cuts = [0, *(int(np.searchsorted(times, edge)) for edge in edges), len(times)]
        return [(lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo]


def restarts(i: int) -> bool:
    return i % 10 == 0  # one instance in ten restarts mid-span


def quiet(i: int) -> bool:
    return i % 25 == 0  # one in 25 has no traffic


def counter_values(name: str, kind: int, span: Span) -> np.ndarray:
    """The series `name` of the instances `i` with i % KINDS == kind (they are alike): a
    counter growing at its rate × the instance's scale × a daily swing, from zero again
    at a restart; `uptime` the seconds since the start or restart."""
    times = span.times()
    restart = int(np.searchsorted(times, span.restart_at())) if restarts(kind) else len(times)
    if name == "uptime":
        since = np.full(len(times), span.start, dtype=np.int64)
        since[restart:] = span.restart_at()
        return times - since
    if quiet(kind):
        return np.zeros(len(times), dtype=np.int64)
    scale = 1.0 / (1 + kind)  # one instance in fifty at full rate
    swing = 1.0 + 0.5 * np.sin(2 * np.pi * times / 86400)
    value = np.cumsum(RATES[name] * scale * swing * span.scrape_s)
    if restart < len(times):
        value[restart:] -= value[restart - 1]  # from zero, then its first scrape's growth
    return np.rint(value).astype(np.int64)


def _write_series(out: IO[str], prefix: str, body: list[str]) -> None:
    # One join per series, its lines' text shared by every instance alike.
    out.write(prefix)
    out.write(f"\n{prefix}".join(body))
    out.write("\n")


def write_slice(path: Path, instances: int, span: Span, lo: int, hi: int) -> int:
    """Openmetrics text of every instance's samples lo..hi-1 of the span; the samples."""
    stamps = [str(t) for t in span.times()[lo:hi].tolist()]
    written = 0
    with open(path, "w") as out:
        for name in [*RATES, "uptime"]:
            # mysqld_exporter's status series are untyped, named without _total.
            out.write(f"# TYPE mysql_global_status_{name} unknown\n")
            for kind in range(min(KINDS, instances)):
                values = counter_values(name, kind, span)[lo:hi].tolist()
                body = [f"{v} {t}" for v, t in zip(values, stamps, strict=True)]
                for i in range(kind, instances, KINDS):
                    labels = f'instance="db{i}:9104",job="mysql"'
                    _write_series(out, f"mysql_global_status_{name}{{{labels}}} ", body)
                    written += len(body)
        for name, (more_labels, value) in GAUGES.items():
            out.write(f"# TYPE {name} gauge\n")
            body = [f"{value} {t}" for t in stamps]
            for i in range(instances):
                labels = f'instance="db{i}:9104",job="mysql"{more_labels}'
                _write_series(out, f"{name}{{{labels}}} ", body)
                written += len(body)
        out.write("# TYPE node_cpu_seconds counter\n")
        elapsed = span.times()[lo:hi] - span.start
        for mode, share in (("idle", 0.6), ("user", 0.4)):
            body = [
                f"{v} {t}"
                for v, t in zip(
                    np.rint(share * elapsed).astype(np.int64).tolist(), stamps, strict=True
                )
            ]
            for i in range(instances):
                for cpu in range(CPUS):
                    labels = f'instance="db{i}:9100",cpu="{cpu}",mode="{mode}"'
                    _write_series(out, f"node_cpu_seconds_total{{{labels}}} ", body)
                    written += len(body)
        out.write("# EOF\n")
    return written


@dataclass(frozen=True)
class Converted:
    samples: int
    write_s: float
    promtool_s: float
    text_mib: float


_promtool: subprocess.Popen[bytes] | None = None  # a worker's promtool, while it runs


def convert_slice(
    data: Path, scratch: Path, instances: int, span: Span, lo: int, hi: int
) -> Converted:
    """One slice written as text, made one block by promtool, its text deleted."""
    text = scratch / f"slice-{lo}.om"
    try:
        started = time.monotonic()
        samples = write_slice(text, instances, span, lo, hi)
        written = time.monotonic()
        size = text.stat().st_size / 2**20
        # promtool parses its whole input once per block it makes: the default 2 h blocks
        # made it read a week's text 85 times.
        global _promtool
        _promtool = subprocess.Popen(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet",
             f"--max-block-duration={SLICE_S // 3600}h", str(text), str(data)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        _, said = _promtool.communicate()
        if _promtool.returncode != 0:
            raise RuntimeError(f"promtool on {text.name}: {said.decode()[-300:]}")
        _promtool = None
        return Converted(samples, written - started, time.monotonic() - written, size)
    finally:
        text.unlink(missing_ok=True)


def _worker_started() -> None:
    signal.signal(signal.SIGTERM, _worker_stop)
    signal.signal(signal.SIGINT, _worker_stop)


def _worker_stop(signum: int, frame: object) -> None:
    # Pool.terminate() (or Ctrl-C) stops a worker: its promtool with it, without a traceback.
    if _promtool is not None:
        _promtool.kill()
    os._exit(1)


def backfill(data: Path, scratch: Path, instances: int, span: Span) -> list[Converted]:
    """Every slice converted, WORKERS at a time: the slices are Prometheus's own block
    ranges, so their blocks neither overlap nor are compacted when Prometheus starts."""
    with multiprocessing.get_context("fork").Pool(WORKERS, initializer=_worker_started) as pool:
        try:
            jobs = [
                pool.apply_async(convert_slice, (data, scratch, instances, span, lo, hi))
                for lo, hi in span.slices()
            ]
            return [job.get() for job in jobs]
        finally:
            pool.terminate()  # by pid; each worker stops its own promtool


def _du_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def _max_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _wait_ready(url: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if server.poll() is not None:
            sys.exit(f"benchmark: Prometheus exited ({server.returncode}) before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"benchmark: Prometheus at {url} not ready after 5 min")


def measure(instances: int, days: int, scrape_s: int, scratch: Path) -> Result:
    data = scratch / f"data-{instances}-{days}"
    span = Span.around(int(time.time()), days, scrape_s)
    started = time.monotonic()
    converted = backfill(data, scratch, instances, span)
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
        _wait_ready(url, server)
        state = scratch / "state"
        os.environ["XDG_STATE_HOME"] = str(state)
        units.write_machine(estimate_helpers.typical())
        report = scratch / f"fleet-{instances}-{days}.json"
        if time.time() > span.end:
            print("benchmark: the series end before the window asked: expect gaps", flush=True)
        started = time.monotonic()
        child = subprocess.Popen(
            [str(ENCBENCH), "estimate", "--prometheus", url, "--since", f"{days}d",
             "--json", str(report)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            _, status, usage = os.wait4(child.pid, 0)
        except BaseException:
            child.kill()  # interrupted: the estimate stopped by its pid too
            child.wait()
            raise
        estimate_s = time.monotonic() - started
        answered = json.loads(report.read_text())["instances"] if report.exists() else []
        return Result(
            instances=instances,
            days=days,
            samples=sum(c.samples for c in converted),
            backfill_s=backfill_s,
            write_s=sum(c.write_s for c in converted),
            promtool_s=sum(c.promtool_s for c in converted),
            data_mib=_du_mib(data),
            text_mib=max(c.text_mib for c in converted),
            estimate_s=estimate_s,
            encbench_max_rss_mib=usage.ru_maxrss / 1024,
            prometheus_max_rss_mib=_max_rss_mib(server.pid),
            exit_status=os.waitstatus_to_exitcode(status),
            instances_answered=len(answered),
            notes=sum(1 for i in answered if i["notes"]),
            notes_expected=sum(1 for i in range(instances) if restarts(i) or quiet(i)),
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(data, ignore_errors=True)


COLUMNS = (
    ("instances", "instances", "{:,}"),
    ("days", "days", "{}"),
    ("samples", "samples", "{:,}"),
    ("backfill_s", "backfill s", "{:.0f}"),
    ("write_s", "of it writing s", "{:.0f}"),
    ("promtool_s", "promtool s", "{:.0f}"),
    ("data_mib", "blocks MiB", "{:.0f}"),
    ("estimate_s", "estimate s", "{:.1f}"),
    ("encbench_max_rss_mib", "encbench MiB", "{:.0f}"),
    ("prometheus_max_rss_mib", "Prometheus MiB", "{:.0f}"),
    ("instances_answered", "answered", "{}"),
    ("notes", "with a note (expected)", "{}"),
)


def table(results: list[Result]) -> str:
    """A Markdown table of the runs, with the estimate's time and memory growth against the
    first run's."""
    head = [label for _, label, _ in COLUMNS] + ["estimate ×", "encbench MiB ×"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = results[0]
    for r in results:
        cells = [form.format(getattr(r, key)) for key, _, form in COLUMNS]
        cells[-1] += f" ({r.notes_expected})"
        cells.append(f"{r.estimate_s / first.estimate_s:.1f}")
        cells.append(f"{r.encbench_max_rss_mib / first.encbench_max_rss_mib:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that every finally runs: Prometheus stopped, data removed


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
    signal.signal(signal.SIGTERM, _stop)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="encbench-prom-fleet-") as scratch:
            for days in args.days:
                for instances in args.instances:
                    result = measure(instances, days, args.scrape_s, Path(scratch))
                    print(json.dumps(asdict(result)), flush=True)
                    results.append(result)
    except KeyboardInterrupt:
        sys.exit("benchmark: interrupted (Prometheus stopped, its data removed)")
    finally:
        if results:
            print(table(results))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        text = json.dumps([asdict(r) for r in results], indent=2) + "\n"
        (args.out / "prometheus_fleet.json").write_text(text)
        (args.out / "prometheus_fleet.md").write_text(table(results) + "\n")


if __name__ == "__main__":
    main()
