"""encbench_key_management on a real server: built at run time, it hands out a new key
version when told, InnoDB re-encrypts a table with it, and it refuses a version the key
file does not hold (or an older one)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from encbench.errors import ServerError
from encbench.servers import keys
from encbench.servers.mariadb import keyplugin
from encbench.servers.mariadb.options import common_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.variants import EncryptionSpec
from encbench.studies.operations.tablespaces import key_version_states

VERSIONS = 5
PLAIN_KEYS = ("datadir", "tmpdir", "socket", "pid-file", "log-error", "port", "user")


@pytest.fixture
def server(tmp_path: Path, state_dir: Path) -> Iterator[SandboxServer]:
    if keyplugin.problem() is not None and not os.environ.get("CI"):
        pytest.skip(f"the build of {keyplugin.NAME} {keyplugin.problem()}")
    made = SandboxServer("rotating", tmp_path / "sandbox")
    try:
        yield made
    finally:
        made.destroy()


def options(server: SandboxServer, plugin_dir: Path, key_file: Path) -> dict[str, str]:
    opts = common_options(
        server.paths, port=server.port, buffer_pool_mb=32, run_as_root=os.geteuid() == 0,
        binlog=False,
    )  # fmt: skip
    opts.update(keyplugin.options(plugin_dir, key_file, EncryptionSpec().algorithm))
    opts.update(
        {
            "innodb_encrypt_tables": "ON",
            "innodb_encryption_threads": "1",
            "innodb_encryption_rotate_key_age": "1",
        }
    )
    return opts


def wait_at(server: SandboxServer, version: int, timeout_s: float = 60) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        _, at, busy = key_version_states(server, version)
        if (at == 1 and not busy) or time.monotonic() > deadline:
            return at
        time.sleep(0.1)


def test_the_plugin_hands_out_a_new_version_and_innodb_rotates_a_table_to_it(
    tmp_path: Path, server: SandboxServer
) -> None:
    key_file = keys.versioned_key_file(keys.private_dir(tmp_path), VERSIONS)
    plugin_dir = keyplugin.build(tmp_path / "sandbox" / "plugins", "test")
    opts = options(server, plugin_dir, key_file)
    # As the study does: the data directory is made plain (mariadb-install-db passes its own
    # --plugin-dir, so it could not load the plugin), then the server starts with it.
    server.initialize({k: v for k, v in opts.items() if k in PLAIN_KEYS})
    server.start(opts)
    server.query("CREATE DATABASE sbtest")
    with server.cursor(database="sbtest") as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB")
        cur.execute("INSERT INTO t SELECT seq, REPEAT('x', 100) FROM seq_1_to_2000")
    assert wait_at(server, 1) == 1
    assert key_version_states(server, 2)[1] == 0  # at version 1, not yet beyond
    # v + 1 is not enough with an age of 1 (fil_crypt_needs_rotation: strictly below)
    server.query(f"SET GLOBAL {keyplugin.NAME}_version = 3")
    server.query("SET GLOBAL innodb_encryption_rotate_key_age = 1")
    assert wait_at(server, 3) == 1
    rows = server.query(
        "SELECT MIN_KEY_VERSION, CURRENT_KEY_VERSION FROM "
        "information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME = 'sbtest/t'"
    )
    assert [int(x) for x in rows[0]] == [3, 3]
    assert int(server.query("SELECT COUNT(*) FROM sbtest.t")[0][0]) == 2000
    # beyond the key file, and backwards: refused, the version unchanged
    for refused in (VERSIONS + 1, 2):
        with pytest.raises((pymysql.MySQLError, ServerError)):
            server.query(f"SET GLOBAL {keyplugin.NAME}_version = {refused}")
    assert int(server.query(f"SELECT @@GLOBAL.{keyplugin.NAME}_version")[0][0]) == 3
    # the key file's path is an option; its keys are never in the error log
    log = server.paths.error_log.read_text(errors="replace")
    for line in key_file.read_text().splitlines():
        assert line.split(";")[2] not in log
