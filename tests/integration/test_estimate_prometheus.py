"""`encbench estimate --prometheus` against a real Prometheus scraping, every second,
mysqld_exporter in front of one sandboxed MariaDB under a light sysbench load: the loaded
instance's estimate is not zero and agrees with `--target`'s over the same window within
their intervals; an exporter stopped part-way and a restart of the server meanwhile are
said, and give no negative or doubled rate.  Beside it, in the same Prometheus: an idle
second MariaDB (its estimate near zero), and a sandboxed PostgreSQL under pgbench through
postgres_exporter (its estimate not zero, and agreeing with `--target postgresql://`); and
`encbench estimate --rules`, loaded into that Prometheus, records what `--prometheus` says.
Prometheus and the exporter run on free loopback ports with their own temporary data, and
are stopped by pid."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from encbench import proc
from encbench.estimate import fleet, fleet_out, fleet_series, rescale, units
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus
from encbench.estimate.rescale import Resolved
from encbench.servers.local import free_port
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from tests import estimate_helpers
from tests.helpers import encbench, encbench_here, skip_unless_ci, start_plain_server
from tests.integration.test_estimate_target import LOAD_DB, light_load

PASSWORD = "not-a-real-secret-prom"
NEEDED = ("prometheus", "prometheus-mysqld-exporter", "prometheus-postgres-exporter")
CAUSES = ("table_reads", "table_writes", "tls_handshakes", "tls_bytes")
PG_CAUSES = ("table_reads", "table_writes", "tls_handshakes")
STEP = "10s"  # the rules' rate window, and --prometheus's step


@dataclass
class Stack:
    server: SandboxServer
    pg: PgSandbox
    url: str  # Prometheus's
    instance: str  # the exporter's, as Prometheus labels it
    idle_instance: str  # the idle MariaDB's exporter's
    pg_instance: str  # postgres_exporter's
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


def _monitor(server: SandboxServer) -> dict[str, str]:
    """A login for mysqld_exporter, its environment (mysqld_exporter 0.14's DATA_SOURCE_NAME)."""
    server.query(f"CREATE USER 'monitor'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
    dsn = f"monitor:{PASSWORD}@tcp(127.0.0.1:{server.port})/"
    return {**os.environ, "DATA_SOURCE_NAME": dsn}


def _start_pg(root: Path) -> tuple[PgSandbox, dict[str, str]]:
    """A sandboxed PostgreSQL with pgbench's tables and a login for postgres_exporter and
    --target, and the exporter's environment (its DATA_SOURCE_NAME)."""
    pg = PgSandbox("estimate-pg", root)
    pg.initialize("host all monitor 127.0.0.1/32 scram-sha-256")
    pg.start(pg_sandbox.server_settings(32))
    pg.create_role("monitor", PASSWORD)
    proc.run(
        [pg_sandbox.program("pgbench"), "-i", "-q", "-s", "1", "postgres"],
        phase="pgbench -i", timeout_s=120, env=_pg_admin(pg),
    )  # fmt: skip
    dsn = f"postgresql://monitor:{PASSWORD}@127.0.0.1:{pg.port}/postgres?sslmode=disable"
    return pg, {**os.environ, "DATA_SOURCE_NAME": dsn}


def _pg_admin(pg: PgSandbox) -> dict[str, str]:
    return {**pg.admin_env(), "PGUSER": pg_sandbox.ADMIN}


@contextlib.contextmanager
def _pg_load(pg: PgSandbox, log: Path, seconds: int) -> Iterator[None]:
    """pgbench at 30 transactions/s, a new connection for each (-C): sessions to count."""
    argv = [pg_sandbox.program("pgbench"), "-c", "2", "-C", "-R", "30", "-T", str(seconds)]
    with _process([*argv, "postgres"], log, _pg_admin(pg)):
        yield


@pytest.fixture
def stack(tmp_path_factory: pytest.TempPathFactory, state_dir: Path) -> Iterator[Stack]:
    missing = [name for name in NEEDED if proc.which(name) is None]
    if missing:
        skip_unless_ci(f"{', '.join(missing)} not installed: run scripts/setup-test-extras.sh")
    root = tmp_path_factory.mktemp("prometheus")
    # The units first: --rules writes them into the rules Prometheus loads.
    units.write_machine(estimate_helpers.typical_pg())
    rules = encbench_here("estimate", "--rules", "--step", STEP)
    assert rules.returncode == 0, rules.stderr
    (root / "rules.yml").write_text(rules.stdout)
    with contextlib.ExitStack() as cleanup:
        server = start_plain_server(root / "server", buffer_pool_mb=8)
        cleanup.callback(server.destroy)
        idle = start_plain_server(root / "idle", buffer_pool_mb=8)
        cleanup.callback(idle.destroy)
        # A directory the `postgres` user of a run by root can enter (pytest's root is 0700).
        pg_root = Path(tempfile.mkdtemp(prefix="encbench-test-"))
        os.chmod(pg_root, 0o755)
        cleanup.callback(shutil.rmtree, pg_root, ignore_errors=True)
        pg, pg_env = _start_pg(pg_root / "pg")
        cleanup.callback(pg.destroy)
        env, idle_env = _monitor(server), _monitor(idle)
        ports = [free_port() for _ in range(4)]
        instance, idle_instance, pg_instance = (f"127.0.0.1:{p}" for p in ports[:3])
        config = root / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: ['{root / 'rules.yml'}']\n"
            "scrape_configs:\n"
            f"  - job_name: mysql\n    static_configs: [{{targets: ['{instance}']}}]\n"
            f"  - job_name: mysql-idle\n    static_configs: [{{targets: ['{idle_instance}']}}]\n"
            f"  - job_name: postgresql\n    static_configs: [{{targets: ['{pg_instance}']}}]\n"
        )
        exporter = ["prometheus-mysqld-exporter", f"--web.listen-address={instance}"]
        prometheus = [
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={root / 'data'}",
            f"--web.listen-address=127.0.0.1:{ports[3]}",
        ]  # fmt: skip
        started = cleanup.enter_context(_process(exporter, root / "exporter.log", env))
        idle_exporter = ["prometheus-mysqld-exporter", f"--web.listen-address={idle_instance}"]
        cleanup.enter_context(_process(idle_exporter, root / "idle-exporter.log", idle_env))
        pg_exporter = ["prometheus-postgres-exporter", f"--web.listen-address={pg_instance}"]
        cleanup.enter_context(_process(pg_exporter, root / "pg-exporter.log", pg_env))
        cleanup.enter_context(_process(prometheus, root / "prometheus.log", dict(os.environ)))
        url = f"http://127.0.0.1:{ports[3]}"
        _wait_for(f"{url}/-/ready", 30)
        stack = Stack(
            server, pg, url, instance, idle_instance, pg_instance, started, exporter, env,
            root / "exporter.log",
        )  # fmt: skip
        try:
            yield stack
        finally:
            _stop(stack.exporter)  # the one running now (a test may have restarted it)


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    logins = {"MYSQL_PWD": PASSWORD, "PGPASSWORD": PASSWORD}
    result = encbench("estimate", *args, env=logins, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["low"] <= b["high"] and b["low"] <= a["high"]


def _instance(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [i for i in report["instances"] if i["instance"] == name]
    assert len(found) == 1, (name, [i["instance"] for i in report["instances"]])
    return found[0]


def _agree(through: dict[str, Any], direct: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Each cause's extra cores, and the total, overlap between --prometheus and --target."""
    by_key = {c["key"]: c for c in through["causes"]}
    for cause in direct["causes"]:
        if cause["key"] in keys:
            mine = by_key[cause["key"]]["cores"]
            assert _overlap(mine, cause["cores"]), (cause["key"], mine, cause["cores"])
    assert _overlap(through["total"]["cores"], direct["total"]["cores"])


def _recorded(stack: Stack, end: float) -> dict[str, float]:
    """The rules' total (bound estimate) per instance, its mean over --prometheus's window."""
    client = Prometheus(stack.url)
    name = f"instance:encbench_extra_cores:rate{STEP}"
    query = f'avg_over_time({name}{{bound="estimate"}}[20s])'
    return {s.labels["instance"]: s.value for s in client.query(query, end)}


def test_the_fleet_estimate_agrees_with_targets_and_says_a_restart(
    tmp_path: Path, stack: Stack, state_dir: Path
) -> None:
    target = f"mysql://monitor@127.0.0.1:{stack.server.port}/"
    pg_target = f"postgresql://monitor@127.0.0.1:{stack.pg.port}/"
    with (
        light_load(stack.server, tmp_path, seconds=120),
        _pg_load(stack.pg, tmp_path / "pg-load.log", 90),
    ):
        # Prometheus's step windows are aligned to the clock (multiples of the step) and its
        # window reaches back a step further: it must start in the load too.  --target's 20 s
        # start just after a 10 s mark, and Prometheus is asked before the next mark but one,
        # so that both read the same two windows: a burst of page flushes at either end of
        # --target's would otherwise fall outside Prometheus's.  PostgreSQL's --target starts
        # a few seconds before, so that its start-up (seconds on a busy machine) is not
        # MariaDB's too: its window is as near Prometheus's as its steady pgbench needs.
        time.sleep(12)
        mark = (time.time() // 10 + 1) * 10
        with ThreadPoolExecutor(max_workers=1) as beside:
            time.sleep(max(0.0, mark - 4 - time.time()))
            pg_run = beside.submit(
                _run, "--target", pg_target, "--seconds", "20", "--json", "pg-target.json",
                cwd=tmp_path,
            )  # fmt: skip
            time.sleep(mark + 0.2 - time.time())
            _run("--target", target, "--seconds", "20", "--json", "target.json", cwd=tmp_path)
            assert time.time() < mark + 29, "--target took so long that the windows no longer meet"
            fleet = _run(
                "--prometheus", stack.url, "--since", "20s", "--step", STEP, "--json",
                "fleet.json", cwd=tmp_path,
            )  # fmt: skip
            pg_run.result()
            _holds_its_files(stack, tmp_path)  # under the same load
    direct = json.loads((tmp_path / "target.json").read_text())["estimate"]
    report = json.loads((tmp_path / "fleet.json").read_text())
    assert "# What encryption would cost this fleet" in fleet.stdout
    assert "the 95th percentile of its --step windows" in fleet.stdout
    assert "this machine's" in fleet.stdout
    assert len(report["instances"]) == 3, [i["instance"] for i in report["instances"]]
    found = _instance(report, stack.instance)
    assert found["server"].startswith("10.") or "MariaDB" in found["server"]
    assert found["notes"] == [], found["notes"]  # scraped throughout, no restart, traffic
    assert found["on_now"]["table_reads"].startswith("no;")  # none decrypted: not encrypted
    through = found["mean"]
    assert through["total"]["cores"]["value"] > 0
    by_key = {c["key"]: c for c in through["causes"]}
    assert by_key["tls_bytes"]["cores"]["value"] > 0
    _agree(through, direct, CAUSES)
    peak = found["peak"]["total"]["cores"]
    assert peak["value"] >= through["total"]["cores"]["low"]

    # The idle MariaDB: only its exporter's own logins and reads, near zero.
    idle = _instance(report, stack.idle_instance)["mean"]
    idle_by_key = {c["key"]: c for c in idle["causes"]}
    for key in ("table_reads", "table_writes"):
        assert idle_by_key[key]["cores"]["value"] < 1e-4, idle_by_key[key]
    assert idle["total"]["cores"]["value"] < 0.01, idle["total"]

    # PostgreSQL through postgres_exporter: not zero, and as --target postgresql:// says.
    pg = _instance(report, stack.pg_instance)
    assert pg["server"].startswith("PostgreSQL "), pg["server"]
    pg_direct = json.loads((tmp_path / "pg-target.json").read_text())["estimate"]
    assert pg["mean"]["total"]["cores"]["value"] > 0
    assert pg_direct["total"]["cores"]["value"] > 0
    _agree(pg["mean"], pg_direct, PG_CAUSES)
    pg_by_key = {c["key"]: c for c in pg["mean"]["causes"]}
    assert "does not count bytes per connection" in pg_by_key["tls_bytes"]["missing"]
    assert "PostgreSQL" in fleet.stdout and "Not estimated" not in fleet.stdout

    # The rules, evaluated by Prometheus every second over the same window: what
    # --prometheus says, within its interval (the rules' step windows slide, its are fixed).
    window_end = datetime.fromisoformat(report["window_end"]).timestamp()
    recorded = _recorded(stack, window_end)
    for name in (stack.instance, stack.pg_instance):
        total = _instance(report, name)["mean"]["total"]["cores"]
        assert total["low"] <= recorded[name] <= total["high"], (name, recorded[name], total)

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
    restarted = _instance(json.loads((tmp_path / "restart.json").read_text()), stack.instance)
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
    rows = {
        r["instance"]: r for r in csv.DictReader(io.StringIO((out / "estimate.csv").read_text()))
    }
    assert float(rows[stack.instance]["extra_cores_mean"]) > 0
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
    # The fleet's series with its PostgreSQL: above MariaDB's alone by about PostgreSQL's
    # estimate (the series at every step, the estimate the window's mean).
    both = fleet_series.ask(
        Prometheus(stack.url),
        Asked(end=time.time(), since_s=20, step_s=10),
        _units(),
        "tables",
        fleet_series.Kinds(first=True, others=frozenset({"postgresql"})),
    )
    assert both is not None and max(both.cores) > max(series.cores), (both, series)


def _units() -> dict[str, Resolved]:
    hosts = rescale.Hosts(
        here=rescale.local_speed, there=None, same_host=False, why_not=fleet.NOT_RESCALED
    )
    return {n: rescale.resolve(u, hosts, None) for n, u in units.read_machine().items()}
