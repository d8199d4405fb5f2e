"""MariaDB's server options for the two variants (servers/variants.py), and how my.cnf writes
them.

`plain` and `encrypted` differ only in encryption: everything else (binary log, buffer pool,
flush method) is rendered from the same function, so a diff of the two option sets is the
whole difference, and it is recorded with the results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from encbench.servers import keys
from encbench.servers.keys import KeyServerAccess
from encbench.servers.variants import EncryptionSpec


@dataclass(frozen=True)
class SandboxPaths:
    datadir: Path
    tmpdir: Path
    socket: Path
    pid_file: Path
    error_log: Path


def common_options(
    paths: SandboxPaths, *, port: int, buffer_pool_mb: int, run_as_root: bool, binlog: bool
) -> dict[str, str]:
    options = {
        "datadir": str(paths.datadir),
        "tmpdir": str(paths.tmpdir),
        "socket": str(paths.socket),
        "pid-file": str(paths.pid_file),
        "log-error": str(paths.error_log),
        "port": str(port),
        "bind-address": "127.0.0.1",
        "skip-name-resolve": "ON",
        "innodb_buffer_pool_size": f"{buffer_pool_mb}M",
        # O_DIRECT: in the io-bound regime reads must reach the device, not the OS page cache.
        "innodb_flush_method": "O_DIRECT",
        # Each regime starts from a cold, known buffer pool, not from a dump of the last one.
        "innodb_buffer_pool_dump_at_shutdown": "OFF",
        "innodb_buffer_pool_load_at_startup": "OFF",
        # Less background noise on a small machine; not part of what is measured.
        "performance_schema": "OFF",
        "max_connections": "600",
    }
    if run_as_root:
        options["user"] = "root"
    if binlog:
        options.update({"log_bin": "binlog", "server_id": "1", "binlog_format": "ROW"})
    else:
        options["skip-log-bin"] = "ON"
    return options


def mysql_encryption_options(spec: EncryptionSpec) -> dict[str, str]:
    """MySQL's: every new table encrypted (default_table_encryption) with the keyring
    component (its manifest in the data directory: servers/installs.ServerInstall.write_keyring), by
    InnoDB's one cipher, AES-256 (MySQL has no choice of algorithm).  Scope `all` adds its
    logs: redo, undo and the binary log (which both variants then write)."""
    options = {"default_table_encryption": "ON"}
    if spec.scope == "all":
        options |= {
            "innodb_redo_log_encrypt": "ON",
            "innodb_undo_log_encrypt": "ON",
            "binlog_encryption": "ON",
        }
    return options


def key_server_options(access: KeyServerAccess) -> dict[str, str]:
    """MariaDB's client of a key server (hashicorp_key_management): where its keys are (the
    KV mount's URL), the CA its certificate is checked against, and the token, which lives
    only in the server's own option file (0600: servers/keys.redact keeps it out of every
    record).  Its caches as MariaDB ships them."""
    return {
        "plugin_load_add": "hashicorp_key_management",
        "hashicorp_key_management_vault_url": access.url,
        "hashicorp_key_management_vault_ca": str(access.ca),
        "hashicorp_key_management_token": access.token(),
    }


def encryption_options(
    spec: EncryptionSpec, key_file: Path, key_server: KeyServerAccess | None = None
) -> dict[str, str]:
    """The encrypted server's options for TDE, by where its keys come from: MySQL's keyring
    file (mysql_encryption_options), MariaDB's key file, `key_file`, or a key server,
    `key_server` (its cipher the server's, AES-CBC: installs.KEY_SERVER_ALGORITHMS)."""
    if spec.key_provider == "keyring-file":
        return mysql_encryption_options(spec)
    if spec.key_provider == "key-server":
        if key_server is None:
            raise ValueError("a key server's keys need its address, CA and token")
        keys = key_server_options(key_server)
    else:
        keys = {
            "plugin_load_add": "file_key_management",
            "file_key_management_filename": str(key_file),
            "file_key_management_encryption_algorithm": spec.algorithm,
        }
    options = {
        **keys,
        "innodb_encrypt_tables": "ON",
        # Threads are needed for the background (re-)encryption of pre-existing tablespaces.
        "innodb_encryption_threads": "2",
    }
    if spec.scope == "all":
        options.update(
            {
                "innodb_encrypt_log": "ON",
                "innodb_encrypt_temporary_tables": "ON",
                "encrypt_tmp_disk_tables": "ON",
                "encrypt_tmp_files": "ON",
                "encrypt_binlog": "ON",
            }
        )
    return options


def server_options(
    variant: str,
    spec: EncryptionSpec,
    paths: SandboxPaths,
    *,
    port: int,
    buffer_pool_mb: int,
    key_file: Path,
    run_as_root: bool,
    calibration: bool = False,
    binlog: bool = False,
    key_server: KeyServerAccess | None = None,
) -> dict[str, str]:
    """A variant's options.  In an A/A calibration the `encrypted` role is a twin of plain:
    exactly plain's options (its own paths and port aside).  `binlog`: both variants write a
    binary log whatever the scope.  A configuration whose layer is the filesystem alone sets
    no option: the kernel encrypts below the server.  Against scope tables, the `plain` role
    is the control that encrypts the tables alone: the logs are the whole difference."""
    # The binary log exists in both variants when scope is `all`, so that encrypting it is
    # the only difference, not having it.
    options = common_options(
        paths,
        port=port,
        buffer_pool_mb=buffer_pool_mb,
        run_as_root=run_as_root,
        binlog=binlog or spec.scope == "all",
    )
    encrypts = spec if variant == "encrypted" else spec.control
    if encrypts is not None and not calibration and encrypts.tde:
        options.update(encryption_options(encrypts, key_file, key_server))
    return options


# Values made only of these are written bare, so the usual options stay readable.
_BARE_VALUE = re.compile(r"[A-Za-z0-9_./:,+@%-]+")


def cnf_value(value: str) -> str:
    r"""One value as MariaDB's option-file reader (mysys/my_default.c) gives it back verbatim.

    Bare, a value ends at `#` (a comment) and loses its outer spaces.  In double quotes, `#`
    and spaces are kept, and the reader turns `\\` into `\` and `\"` into `"`; escaping those two
    carries every other character (checked against my_print_defaults in
    tests/servers/test_option_files.py).  A line break cannot be carried: check_path refuses it."""
    if "\n" in value or "\r" in value:
        raise ValueError(f"a line break cannot be written in my.cnf: {value!r}")
    if _BARE_VALUE.fullmatch(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_cnf(
    options: dict[str, str],
    sections: dict[str, dict[str, str]] | None = None,
    group: str = "mariadbd",
) -> str:
    """[mariadbd] (MySQL's server reads [mysqld]) with `options`, then each further group (a
    Galera node's [sst], which the SST scripts read from the same file when they start)."""
    lines = [f"[{group}]"]
    lines += [f"{key}={cnf_value(value)}" for key, value in options.items()]
    for other, values in (sections or {}).items():
        lines += ["", f"[{other}]"]
        lines += [f"{key}={cnf_value(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


# Options that name this sandbox's own files and port: different by construction, not a
# difference between the variants.
PER_SANDBOX = frozenset({"datadir", "tmpdir", "socket", "pid-file", "log-error", "port"})


def option_difference(plain: dict[str, str], encrypted: dict[str, str]) -> dict[str, str]:
    """Options the encrypted variant sets beyond plain, with paths reduced to placeholders
    so that the report shows the settings, not this run's directories."""
    diff = {}
    for key, value in encrypted.items():
        if key in PER_SANDBOX:
            continue
        if plain.get(key) != value:
            diff[key] = value
    # No key file's path, no key server's token and no private path in a record or report.
    hidden = {"file_key_management_filename": "<key file>",
              "hashicorp_key_management_vault_ca": "<the run's CA>"}  # fmt: skip
    return {k: hidden.get(k, v) for k, v in keys.redact_tokens(diff).items()}
