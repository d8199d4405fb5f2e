"""The key server, real: OpenBao started by encbench in production mode on the run's own CA,
initialized, unsealed, its keys written as MariaDB's hashicorp_key_management plugin reads
them, and a token limited by policy to reading them; its secrets 0600 and in no process's
arguments; nothing left once stopped."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import psutil
import pytest

from encbench import proc
from encbench.errors import ProofError
from encbench.servers import key_server, keys, pki

pytestmark = pytest.mark.integration


def test_openbao_serves_the_keys_to_a_token_that_can_only_read_them(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    made = pki.generate(tmp_path, "ecdsa-p256")
    server = key_server.KeyServer(private / "key-server", made)
    try:
        server.start()
        assert server.process is not None
        pid = server.process.pid
        server.initialize((1, 2))
        assert server.write_key(1, "ab" * 32) == 2  # a second version of key 1
        proven = server.prove(1)
        assert "version 2" in proven["key"] and "nothing else" in proven["token"]
        assert server.key_reads(1) == 1  # the proof's own read, in the audit log
        assert stat.S_IMODE(server.audit_log.stat().st_mode) == 0o600
        token = server.token_file.read_text()
        unseal = (server.root / "unseal-key").read_text().strip()
        for secret in (server.token_file, server.root / "unseal-key", server.root / "openbao.hcl"):
            assert stat.S_IMODE(secret.stat().st_mode) == 0o600, secret
        assert stat.S_IMODE(server.root.stat().st_mode) == 0o700
        arguments = " ".join(
            " ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])
        )
        assert token not in arguments and unseal not in arguments
        assert token not in server.log.read_text() and unseal not in server.log.read_text()
        # A token that may write keys is no key reader's: the proof refuses it.
        assert server._root_token is not None
        keys.write_secret(server.token_file, server._root_token)
        with pytest.raises(ProofError, match="more than read keys"):
            server.prove(1)
    finally:
        server.stop()
    assert proc.wait_gone(pid, 10)


def test_mariadb_reads_its_table_key_from_the_key_server(tmp_path: Path) -> None:
    """MariaDB's hashicorp_key_management plugin, given the key server's address, the run's
    CA and the limited token: the plugin is active, an ENCRYPTED=YES table has key 1 at the
    key server's version, and the key server's audit log holds the plugin's read of it."""
    from encbench.servers.mariadb import installs
    from encbench.servers.mariadb.options import server_options
    from encbench.servers.mariadb.sandbox import SandboxServer
    from encbench.servers.variants import EncryptionSpec

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    made = pki.generate(tmp_path, "ecdsa-p256")
    server = key_server.KeyServer(private / "key-server", made)
    mariadb = SandboxServer("encrypted", tmp_path / "s", install=installs.of("system"))
    options = server_options(
        "plain", EncryptionSpec(), mariadb.paths, port=mariadb.port, buffer_pool_mb=32,
        key_file=Path("/nonexistent"), run_as_root=os.geteuid() == 0,
    )  # fmt: skip
    try:
        server.start()
        server.initialize((1,))
        options |= {
            "plugin_load_add": "hashicorp_key_management",
            "hashicorp-key-management-vault-url": server.keys_url,
            "hashicorp-key-management-token": server.token_file.read_text(),
            "hashicorp-key-management-vault-ca": str(made.ca_cert),
        }
        mariadb.initialize(options)
        mariadb.start(options)
        plugin = mariadb.query(
            "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS "
            "WHERE PLUGIN_NAME = 'hashicorp_key_management'"
        )
        assert plugin == [("ACTIVE",)]
        mariadb.query("CREATE DATABASE k")
        mariadb.query("CREATE TABLE k.t (id INT PRIMARY KEY) ENCRYPTED=YES ENCRYPTION_KEY_ID=1")
        found = mariadb.query(
            "SELECT CURRENT_KEY_ID, CURRENT_KEY_VERSION FROM "
            "information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME = 'k/t'"
        )
        assert found == [(1, 1)]
        assert server.key_reads(1) >= 1
        # The server's option file holds the token: private.
        assert stat.S_IMODE(mariadb.defaults_file.stat().st_mode) == 0o600
    finally:
        mariadb.destroy()
        server.stop()
