"""The write path's housekeeping on MySQL 9.7, which has neither innodb_max_purge_lag_wait
nor SHOW MASTER STATUS (gone in 8.4): oltp_insert's deletes are purged by its history list
(at idle MySQL's purge took about 77 s for a few hundred undo logs here, so this test has
a file of its own and a worker to itself), its current binary log read from SHOW BINARY
LOGS."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import need_root
from tests.integration.test_write_path import trimmed_and_purged


@pytest.fixture(autouse=True)
def root_built() -> None:
    need_root("mysql")


def test_mysql_rows_oltp_insert_added_are_removed_and_purged_before_the_next_run(
    tmp_path: Path, state_dir: Path
) -> None:
    trimmed_and_purged(tmp_path, "mysql")
