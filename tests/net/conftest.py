"""Transit tests: the integration ones need real mariadbd, sysbench and openssl."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench import proc

NEEDED = ("mariadbd", "mariadb-install-db", "sysbench", "openssl", "mariadb")


@pytest.fixture(scope="session")
def missing_tools() -> list[str]:
    return [name for name in NEEDED if proc.which(name) is None]


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private registry, so tests never see (or clean) a real user's sandboxes or links."""
    path = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    yield path
