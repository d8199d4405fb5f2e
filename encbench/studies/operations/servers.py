"""The operations study's two servers, `plain` and `encrypted`, identical but for the
encryption options (servers/variants.py), with the profile's data, provisioned and proven
once.  Encrypting existing data needs plain tables on a server that has a key: for those
cells the plain server is restarted `convertible` (plain, plus file_key_management with
innodb_encrypt_tables=OFF), and both variants of the cell run on it.  Key rotation needs
tables encrypted with a key that has versions: for it the plain server is restarted
`rotatable` (plain, plus encbench's own key plugin, servers/mariadb/keyplugin, with
innodb_encrypt_tables=ON), its tables encrypted before the cell's first round, and decrypted
again before it leaves that mode, so that every other cell finds it plain.  Every other cell
runs each variant on its own server."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.profiles.profile import Profile
from encbench.proof import at_rest as proof
from encbench.results.store import ResultStore
from encbench.servers import keys, sizing
from encbench.servers.closed_on_exit import ClosedOnExit
from encbench.servers.mariadb import keyplugin
from encbench.servers.mariadb.options import encryption_options, option_difference, server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.servers.variants import VARIANTS, EncryptionSpec
from encbench.studies.operations import tablespaces
from encbench.studies.operations.options import operations_options
from encbench.workloads import sysbench

RECORD = "operations.json"
# The plain server's configurations: as provisioned, with a key to encrypt existing data, or
# with versioned keys to rotate.
PLAIN, CONVERTIBLE, ROTATABLE = "plain", "convertible", "rotatable"
# InnoDB re-encrypts a page when its key version + innodb_encryption_rotate_key_age is less
# than the latest version (fil0crypt.cc, fil_crypt_needs_rotation: strictly less; an age of 0
# turns rotation off).  With the smallest age, 1, a rotation must therefore raise the latest
# version by 2: to v + 1 nothing would be re-encrypted.
ROTATE_KEY_AGE = 1
VERSION_STEP = ROTATE_KEY_AGE + 1
# Long enough for entering and leaving the rotatable mode on data the size of a profile's.
MODE_CHANGE_TIMEOUT_S = 3600.0


def key_versions_needed(max_rounds: int) -> int:
    """The plugin reads its key file once, at start: every version a cell can rotate to is
    made up front, one rotation per round, with rounds measured again (max_rounds bounds
    them too) and a spare."""
    return 1 + VERSION_STEP * (max_rounds + 2)


def buffer_pool_mb(profile: Profile) -> int:
    """The in-memory regime's pool for the profile's data: operations time the server, not
    the disk under a starved pool."""
    data_mb = sizing.rows_mb(profile.data.rows)
    return sizing.pool_mb(data_mb, "in-memory", profile.regime)


class OperationServers(ClosedOnExit):
    """A context manager: on any exit both servers are stopped and their sandboxes deleted
    (a crashed server too: it is killed by pid, never by name)."""

    def __init__(self, store: ResultStore, profile: Profile) -> None:
        self.store = store
        self.profile = profile
        # One configuration (profile.parse refuses lists with operations).
        self.spec = EncryptionSpec(
            algorithm=profile.server.encryption_algorithm[0],
            scope=profile.server.encryption_scope[0],
            key_provider=profile.server.keys,
        )
        self.key_file = keys.key_file(keys.private_dir(store.path))
        sandbox = store.path / "sandbox"
        self.roots = {v: sandbox / f"operations-{v}" for v in VARIANTS}
        for root in self.roots.values():
            clear_stale_sandbox(root)
        # A backup a killed run left in its own sandbox (never a directory encbench did not
        # name): --resume starts without it.
        for variant in VARIANTS:
            shutil.rmtree(backup_dir(store, variant), ignore_errors=True)
        self.servers: dict[str, SandboxServer] = {
            v: SandboxServer(v, self.roots[v]) for v in VARIANTS
        }
        self.pool_mb = buffer_pool_mb(profile)
        self.rotates = "key-rotation" in operations_options(profile).operations
        self.plugin_dir = self.roots["plain"] / "plugins"
        self.rotation_keys = keys.private_dir(store.path) / "rotation.keys"
        self.plain_mode = PLAIN
        self.record: dict[str, Any] = store.read_json(RECORD) or {}

    def close(self) -> None:
        for server in self.servers.values():
            server.destroy(keep_log_in=self.store.path / "logs" / "operations")
        remove_empty_sandbox_dir(self.store)

    @property
    def tables(self) -> int:
        return self.profile.data.tables

    def options(self, variant: str, mode: str = PLAIN) -> dict[str, str]:
        server = self.servers[variant]
        options = server_options(
            variant,
            self.spec,
            server.paths,
            port=server.port,
            buffer_pool_mb=self.pool_mb,
            key_file=self.key_file,
            run_as_root=os.geteuid() == 0,
        )
        if variant == "plain" and mode == CONVERTIBLE:
            # Only the tables are converted: the key is there, the tables are not yet
            # encrypted, and the background threads wait for innodb_encrypt_tables=ON.
            tables = EncryptionSpec(self.spec.algorithm, key_provider=self.spec.key_provider)
            options.update(encryption_options(tables, self.key_file))
            options["innodb_encrypt_tables"] = "OFF"
            options["innodb_encryption_rotation_iops"] = str(
                operations_options(self.profile).rotation_iops
            )
        if variant == "plain" and mode == ROTATABLE:
            options.update(
                keyplugin.options(self.plugin_dir, self.rotation_keys, self.spec.algorithm)
            )
            options.update(
                {
                    "innodb_encrypt_tables": "ON",
                    "innodb_encryption_threads": "2",
                    "innodb_encryption_rotate_key_age": str(ROTATE_KEY_AGE),
                    "innodb_encryption_rotation_iops": str(
                        operations_options(self.profile).rotation_iops
                    ),
                }
            )
        return options

    def provision(self, log: Callable[[str], None], key_rotation: dict[str, Any]) -> None:
        data = self.profile.data
        proofs = {}
        for variant, server in self.servers.items():
            log(f"operations: provisioning the {variant} server")
            opts = self.options(variant)
            server.initialize(opts)
            server.start(opts)
            log(f"operations: loading {data.tables} × {data.table_size:,} rows into {variant}")
            sysbench.load(
                server, data, self.store.path / "logs" / f"operations-prepare-{variant}.log"
            )
            log(f"operations: proving that {variant} is {variant}")
            proofs[variant] = proof.prove(server, variant, self.spec, data.tables).to_json()
        self.record.update(
            {
                "encryption": {"algorithm": self.spec.algorithm, "scope": self.spec.scope},
                "data": {
                    "tables": data.tables,
                    "table_size": data.table_size,
                    "estimated_mb": round(sizing.rows_mb(data.rows), 1),
                },
                "buffer_pool_mb": self.pool_mb,
                "proofs": proofs,
                "mariadb_version": self.servers["plain"].version(),
                "options": {v: keys.redact(self.options(v)) for v in VARIANTS},
                "convertible_options": keys.redact(self.options("plain", CONVERTIBLE)),
                **(
                    {"rotatable_options": keys.redact(self.options("plain", ROTATABLE))}
                    if self.rotates
                    else {}
                ),
                "option_difference": option_difference(
                    self.options("plain"), self.options("encrypted")
                ),
                "rotation_iops": operations_options(self.profile).rotation_iops,
                "key_rotation": key_rotation,
            }
        )
        self.store.write_json(RECORD, self.record)

    def use_plain_as(self, mode: str, log: Callable[[str], None]) -> None:
        """Restart the plain server in `mode` if it is not in it, and prove its tables plain
        (encrypted in the rotatable mode, all of them, before its first round)."""
        if self.plain_mode == mode:
            return
        server = self.servers["plain"]
        if self.plain_mode == ROTATABLE:
            # Its pages can only be read with the plugin's keys: decrypted first, untimed.
            log("operations: decrypting the plain server's tables before it leaves rotation")
            server.query("SET GLOBAL innodb_encrypt_tables = OFF")
            tablespaces.wait_tables(server, False, MODE_CHANGE_TIMEOUT_S)
        if mode == ROTATABLE:
            keyplugin.build(self.plugin_dir, self.record.get("mariadb_version") or "")
            keys.versioned_key_file(
                self.rotation_keys.parent,
                key_versions_needed(operations_options(self.profile).max_rounds),
                self.rotation_keys.name,
            )
        log(f"operations: restarting the plain server {mode}")
        server.restart(self.options("plain", mode))
        # The mode is what the server now runs as, whether or not its proof passes, so that
        # leaving it still decrypts first.
        self.plain_mode = mode
        if mode == ROTATABLE:
            log("operations: encrypting the plain server's tables with key version 1")
            tablespaces.wait_tables(server, True, MODE_CHANGE_TIMEOUT_S)
            proof.prove_tablespaces(server, "encrypted", self.tables, when="in rotation mode")
        else:
            proof.prove_tablespaces(server, "plain", self.tables)

    def datadir_bytes(self, variant: str) -> int:
        """What the background encryption goes over: every InnoDB tablespace file."""
        datadir = self.servers[variant].paths.datadir
        files = [*datadir.glob("ibdata*"), *datadir.glob("*/*.ibd")]
        return sum(f.stat().st_size for f in files if f.is_file())


def backup_dir(store: ResultStore, variant: str) -> Path:
    """Where a timed backup of a variant goes: inside the run's sandbox, deleted after it."""
    return store.path / "sandbox" / f"operations-backup-{variant}"


def estimated_disk_bytes(profile: Profile) -> int:
    """Two data directories and, while a backup is timed, one backup of one of them."""
    return 3 * sizing.data_dir_bytes(profile.data.rows)


def memory_mb(profile: Profile) -> tuple[int, str]:
    pool = buffer_pool_mb(profile)
    need = len(VARIANTS) * (pool + sizing.SERVER_ALLOWANCE_MB) + math.ceil(pool / 2)  # + --prepare
    return need, (
        f"two servers, each a {pool:,} MB buffer pool + {sizing.SERVER_ALLOWANCE_MB} MB, and "
        "mariadb-backup; use smaller data (data.tables, data.table_size) or a smaller "
        "regime.in_memory_headroom"
    )
