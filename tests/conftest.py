"""Every study registers its section of the profile when the one list of studies is
imported, as the command line imports it before reading a profile."""

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import encbench.studies  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    """The stop signals as a terminal gives them.  A test run started in the background of
    a shell script (`cmd &` ignores SIGINT) or under nohup (SIGHUP) inherits them ignored,
    which encbench honors as its user's choice (stopping.py) and every child inherits; the
    tests are of the ordinary case, whatever started them."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGHUP, signal.SIGTERM):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This machine's state (XDG_STATE_HOME: stored units, records of servers, leftovers),
    private to the test.  The integration and transit tests have their own, which also
    clean up after a run."""
    path = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    return path


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory others may enter: pytest's own temporary root is 0700, which the
    `postgres` user of a run by root cannot enter (a run refuses such an --out)."""
    path = Path(tempfile.mkdtemp(prefix="encbench-test-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


# The integration files that take longest, longest first (each file's seconds, its tests'
# setup and call added up, on five workers of a fresh clone on a 2-core VM, 2026-11-29):
# with `--dist loadfile` a worker takes whole files in collection order, and a long file
# collected late (they sort late by name) runs on at the end while the other workers idle.
# Every other file keeps its place after these.
LONGEST_FILES_FIRST = (
    "test_run.py",  # 246 s: a short run, interruptions, a kill, resumes
    "test_replication_run.py",  # 228 s
    "test_transit_run.py",  # 204 s
    "test_state_transfer_cluster_run.py",  # 188 s: three nodes, calibration, SIGTERM mid-SST
    "test_state_transfer_run.py",  # 154 s: smoke-sst, SIGTERMs while the limits are measured
    "test_pg_transit_run.py",  # 125 s
    "test_mysql_sandbox.py",  # 117 s
    "test_write_path_mysql.py",  # 111 s alone, 2026-12-07: MySQL's purge at idle
    "test_write_path.py",  # about 110 s: three pairs (tables, all, all against tables)
    "test_pg_at_rest_run.py",  # 116 s
    "test_target_run.py",  # 94 s
    "test_estimate_twins.py",  # 92 s
    "test_sst_pipelines_run.py",  # 91 s
    "test_estimate_target.py",  # 84 s
    "test_filesystem_layer.py",  # 83 s
    "test_operations_run.py",  # 79 s
    "test_estimate_prometheus.py",  # 75 s
    "test_calibration_run.py",  # 74 s
    "test_pg_target_run.py",  # 68 s
    "test_estimate_units.py",  # 68 s
    "test_mysql_target.py",  # 63 s
    "test_shapes_run.py",  # 60 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
