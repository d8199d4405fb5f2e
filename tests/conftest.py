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
def open_dir() -> Iterator[Path]:
    """A directory others may enter: pytest's own temporary root is 0700, which the
    `postgres` user of a run by root cannot enter (a run refuses such an --out)."""
    path = Path(tempfile.mkdtemp(prefix="encbench-test-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
