"""`encbench estimate --prometheus` against a real Prometheus scraping, every second,
mysqld_exporter in front of one sandboxed MariaDB under a light sysbench load: the loaded
instance's estimate is not zero and agrees with `--target`'s over the same window within
their intervals; an exporter stopped part-way and a restart of the server meanwhile are
said, and give no negative or doubled rate.
Prometheus and the exporter run on free loopback ports with their own temporary data, and
are stopped by pid."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from encbench import proc
from encbench.estimate import fleet, fleet_out, fleet_series, rescale, units
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus
from encbench.estimate.rescale import Resolved
from encbench.servers.sandbox import SandboxServer, free_port
from tests.helpers import encbench, skip_unless_ci, start_plain_server
from tests.integration.test_estimate_target import LOAD_DB, light_load, store_units

PASSWORD = "not-a-real-secret-prom"
NEEDED = ("prometheus", "prometheus-mysqld-exporter")
CAUSES = ("table_reads", "table_writes", "tls_handshakes", "tls_bytes")


@dataclass
class Stack:
    server: SandboxServer
    url: str  # Prometheus's
    instance: str  # the exporter's, as Prometheus labels it
    exporter: subprocess.Popen[bytes]
    exporter_argv: list[str]
    exporter_env: dict[str, str]
    exporter_log: Path

    def stop_exporter(self) -> None:
        _stop(self.exporter)

    def start_exporter(self) -> None:
        self.exporter = _start(self.exporter_argv, self.exporter_log, self.exporter_env)


def _wait_for(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def _start(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)


def _stop(started: subprocess.Popen[bytes]) -> None:
    started.terminate()
    try:
        started.wait(timeout=20)
    except subprocess.TimeoutExpired:
        started.kill()
        started.wait(timeout=10)


@contextlib.contextmanager
def _process(argv: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    started = _start(argv, log, env)
    try:
        yield started
    finally:
        _stop(started)


@pytest.fixture
def stack(tmp_path_factory: pytest.TempPathFactory, state_dir: Path) -> Iterator[Stack]:
    missing = [name for name in NEEDED if proc.which(name) is None]
    if missing:
        skip_unless_ci(f"{', '.join(missing)} not installed: run scripts/setup-test-extras.sh")
    root = tmp_path_factory.mktemp("prometheus")
    server = start_plain_server(root / "server", buffer_pool_mb=8)
    try:
        server.query(f"CREATE USER 'monitor'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
        exporter_port, prometheus_port = free_port(), free_port()
        instance = f"127.0.0.1:{exporter_port}"
        config = root / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: mysql\n    static_configs: [{{targets: ['{instance}']}}]\n"
        )
        # The exporter's login in its environment (mysqld_exporter 0.14's DATA_SOURCE_NAME).
        env = {
            **os.environ,
            "DATA_SOURCE_NAME": f"monitor:{PASSWORD}@tcp(127.0.0.1:{server.port})/",
        }
        exporter = ["prometheus-mysqld-exporter", f"--web.listen-address={instance}"]
        prometheus = [
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={root / 'data'}",
            f"--web.listen-address=127.0.0.1:{prometheus_port}",
        ]  # fmt: skip
        with (
            _process(exporter, root / "exporter.log", env) as started,
            _process(prometheus, root / "prometheus.log", dict(os.environ)),
        ):
            url = f"http://127.0.0.1:{prometheus_port}"
            _wait_for(f"{url}/-/ready", 30)
            stack = Stack(server, url, instance, started, exporter, env, root / "exporter.log")
            try:
                yield stack
            finally:
                _stop(stack.exporter)  # the one running now (a test may have restarted it)
    finally:
        server.destroy()


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = encbench("estimate", *args, env={"MYSQL_PWD": PASSWORD}, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["low"] <= b["high"] and b["low"] <= a["high"]


def test_the_fleet_estimate_agrees_with_targets_and_says_a_restart(
    tmp_path: Path, stack: Stack, state_dir: Path
) -> None:
    store_units()
    target = f"mysql://monitor@127.0.0.1:{stack.server.port}/"
    with light_load(stack.server, tmp_path, seconds=120):
        # Prometheus's step windows are aligned to the clock (multiples of the step) and its
        # window reaches back a step further: it must start in the load too.  --target's 20 s
        # start just after a 10 s mark, and Prometheus is asked before the next mark but one,
        # so that both read the same two windows: a burst of page flushes at either end of
        # --target's would otherwise fall outside Prometheus's.
        time.sleep(12)
        mark = (time.time() // 10 + 1) * 10
        time.sleep(mark + 0.2 - time.time())
        _run("--target", target, "--seconds", "20", "--json", "target.json", cwd=tmp_path)
        assert time.time() < mark + 29, "--target took so long that the windows no longer meet"
        fleet = _run(
            "--prometheus", stack.url, "--since", "20s", "--step", "10s", "--json", "fleet.json",
            cwd=tmp_path,
        )  # fmt: skip
        _holds_its_files(stack, tmp_path)  # under the same load
    direct = json.loads((tmp_path / "target.json").read_text())["estimate"]
    report = json.loads((tmp_path / "fleet.json").read_text())
    assert "# What encryption would cost this fleet" in fleet.stdout
    assert "the 95th percentile of its --step windows" in fleet.stdout
    assert "this machine's" in fleet.stdout
    [found] = report["instances"]
    assert found["instance"] == stack.instance
    assert found["server"].startswith("10.") or "MariaDB" in found["server"]
    assert found["notes"] == [], found["notes"]  # scraped throughout, no restart, traffic
    assert found["on_now"]["table_reads"].startswith("no;")  # none decrypted: not encrypted
    through = found["mean"]
    assert through["total"]["cores"]["value"] > 0
    by_key = {c["key"]: c for c in through["causes"]}
    assert by_key["tls_bytes"]["cores"]["value"] > 0
    for cause in direct["causes"]:
        if cause["key"] in CAUSES:
            mine = by_key[cause["key"]]["cores"]
            assert _overlap(mine, cause["cores"]), (cause["key"], mine, cause["cores"])
    assert _overlap(through["total"]["cores"], direct["total"]["cores"])
    peak = found["peak"]["total"]["cores"]
    assert peak["value"] >= through["total"]["cores"]["low"]

    # The exporter stopped part-way, and the server restarted meanwhile: both said, and no
    # rate below zero or above what the load gave.
    stack.stop_exporter()
    stack.server.restart(dict(stack.server.options))
    time.sleep(4)
    stack.start_exporter()
    time.sleep(6)  # scrapes after it
    after = _run(
        "--prometheus", stack.url, "--since", "20s", "--step", "2s", "--json", "restart.json",
        "--match", '{job="mysql"}', cwd=tmp_path,
    )  # fmt: skip
    [restarted] = json.loads((tmp_path / "restart.json").read_text())["instances"]
    notes = " ".join(restarted["notes"])
    assert "restarted 1 time" in notes and "restarted 1 time" in after.stdout, notes
    assert "step windows (stopped, or not scraped, for the rest)" in notes, notes
    highest = {c["key"]: c["rate"] for c in through["causes"] if c["rate"]}
    for c in restarted["mean"]["causes"]:
        if c["rate"] is not None:
            assert c["rate"]["low"] >= 0, c
            if c["key"] in ("tls_bytes", "tls_handshakes"):
                # A counter's drop taken as a rise would be its whole value in one step window:
                # a minute's bytes and logins, many times a step's.
                assert c["rate"]["high"] <= 3 * highest[c["key"]]["high"] + 1, c
    stack.server.query(f"DROP DATABASE {LOAD_DB}")


def _holds_its_files(stack: Stack, tmp_path: Path) -> None:
    """--out DIR: the four files, the CSV's row and the page's plots, among them the fleet's
    series from the range query (its PromQL held to a real Prometheus: a refused or empty
    answer draws no series)."""
    out = tmp_path / "fleet-out"
    written = _run(
        "--prometheus", stack.url, "--since", "20s", "--step", "10s", "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert written.stdout.split() == [str(out / n) for n in fleet_out.NAMES]
    [row] = list(csv.DictReader(io.StringIO((out / "estimate.csv").read_text())))
    assert row["instance"] == stack.instance and float(row["extra_cores_mean"]) > 0
    series = fleet_series.ask(
        Prometheus(stack.url),
        Asked(end=time.time(), since_s=20, step_s=10),
        _units(),
        "tables",
    )
    assert series is not None and max(series.cores) > 0, series
    assert all(
        lo <= c <= hi for lo, c, hi in zip(series.low, series.cores, series.high, strict=True)
    )
    assert (out / "estimate.html").read_text().count("<svg") == 3


def _units() -> dict[str, Resolved]:
    hosts = rescale.Hosts(
        here=rescale.local_speed, there=None, same_host=False, why_not=fleet.NOT_RESCALED
    )
    return {n: rescale.resolve(u, hosts, None) for n, u in units.read_machine().items()}
