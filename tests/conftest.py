"""Every study registers its section of the profile when the one list of studies is
imported, as the command line imports it before reading a profile."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import encbench.studies  # noqa: F401


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


# The integration files that take longest (their measured seconds under two workers, whole
# file), started first: with `--dist loadfile` a worker takes whole files in collection order,
# and a long file collected last (they sort late by name) runs alone at the end while the other
# worker idles.  Every other file keeps its place after these.
LONGEST_FILES_FIRST = (
    "test_state_transfer_run.py",  # 135 s: smoke-sst, SIGTERMs while the limits are measured
    "test_state_transfer_cluster_run.py",  # 135 s: three nodes, calibration, SIGTERM mid-SST
    "test_replication_run.py",  # 130 s
    "test_write_path.py",
    "test_transit_run.py",
    "test_operations_run.py",
    "test_estimate_target.py",
    "test_estimate_units.py",
    "test_calibration_run.py",
    "test_pg_at_rest_run.py",
    "test_pg_transit_run.py",
    "test_bound_run.py",
    "test_sst_pipelines_run.py",
    "test_shapes_run.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
