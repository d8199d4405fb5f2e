"""Integration tests run real sandboxed MariaDB servers and the real sysbench."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench import proc

NEEDED = ("mariadbd", "mariadb-install-db", "sysbench")
# PostgreSQL's tests need none of MariaDB's tools; they skip without PostgreSQL themselves.
POSTGRESQL_ONLY = ("test_pg_transit_run.py", "test_pg_target_run.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = [name for name in NEEDED if proc.which(name) is None]
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
            if Path(str(item.fspath)).name in POSTGRESQL_ONLY:
                continue
            # CI installs them (make test): there a missing tool fails the tests, not skips.
            if missing and not os.environ.get("CI"):
                item.add_marker(
                    pytest.mark.skip(reason=f"{', '.join(missing)} not installed: run `make setup`")
                )


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private sandbox registry, so tests never see (or clean) a real user's sandboxes."""
    path = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    yield path
