"""MariaDB's option rendering: the two variants differ only in encryption."""

import dataclasses
from pathlib import Path

from encbench.servers.mariadb.options import (
    SandboxPaths,
    option_difference,
    render_cnf,
    server_options,
)
from encbench.servers.variants import EncryptionSpec

PATHS = SandboxPaths(
    datadir=Path("/s/data"),
    tmpdir=Path("/s/tmp"),
    socket=Path("/t/x.sock"),
    pid_file=Path("/s/pid"),
    error_log=Path("/s/err"),
)
KEY = Path("/private/keys")


def options(variant: str, spec: EncryptionSpec, **more: bool) -> dict[str, str]:
    """`more`: server_options' switches (binlog)."""
    return server_options(
        variant,  # type: ignore[arg-type]
        spec,
        PATHS,
        port=3307,
        buffer_pool_mb=64,
        key_file=KEY,
        run_as_root=False,
        **more,
    )


def test_plain_has_no_encryption_option() -> None:
    plain = options("plain", EncryptionSpec())
    assert not any("encrypt" in k or "key_management" in k for k in plain)
    assert plain["innodb_flush_method"] == "O_DIRECT"
    assert plain["innodb_buffer_pool_size"] == "64M"
    assert plain["bind-address"] == "127.0.0.1"


def test_table_scope_differs_only_in_table_encryption() -> None:
    spec = EncryptionSpec(algorithm="AES_CBC", scope="tables")
    diff = option_difference(options("plain", spec), options("encrypted", spec))
    assert diff == {
        "plugin_load_add": "file_key_management",
        "file_key_management_filename": "<key file>",
        "file_key_management_encryption_algorithm": "AES_CBC",
        "innodb_encrypt_tables": "ON",
        "innodb_encryption_threads": "2",
    }


def test_scope_all_encrypts_logs_and_temporary_files_and_both_keep_a_binlog() -> None:
    spec = EncryptionSpec(scope="all")
    plain, enc = options("plain", spec), options("encrypted", spec)
    assert plain["log_bin"] == enc["log_bin"] == "binlog"
    for key in (
        "innodb_encrypt_log",
        "encrypt_tmp_files",
        "encrypt_tmp_disk_tables",
        "innodb_encrypt_temporary_tables",
        "encrypt_binlog",
    ):
        assert enc[key] == "ON"
        assert key not in plain


def test_cnf_has_one_line_per_option_under_the_server_group() -> None:
    text = render_cnf({"a": "1", "skip-log-bin": "ON"})
    assert text == "[mariadbd]\na=1\nskip-log-bin=ON\n"


def test_the_binlog_option_gives_both_variants_a_plain_binlog_under_scope_tables() -> None:
    spec = EncryptionSpec(scope="tables")
    made = [options(v, spec, binlog=True) for v in ("plain", "encrypted")]
    assert made[0]["log_bin"] == made[1]["log_bin"] == "binlog"
    assert "skip-log-bin" not in made[0]
    assert "encrypt_binlog" not in made[1]
    # Without it, scope tables keeps the binary log off in both (as before).
    assert options("plain", spec)["skip-log-bin"] == "ON"


def test_against_scope_tables_the_control_encrypts_its_tables_and_only_the_logs_differ() -> None:
    spec = EncryptionSpec(scope="all", against="tables")
    control, enc = options("plain", spec), options("encrypted", spec)
    assert control["innodb_encrypt_tables"] == enc["innodb_encrypt_tables"] == "ON"
    assert control["file_key_management_filename"] == str(KEY)
    assert control["log_bin"] == enc["log_bin"] == "binlog"
    assert option_difference(control, enc) == {
        "innodb_encrypt_log": "ON",
        "innodb_encrypt_temporary_tables": "ON",
        "encrypt_tmp_disk_tables": "ON",
        "encrypt_tmp_files": "ON",
        "encrypt_binlog": "ON",
    }
    # MySQL's control: its tables encrypted by the keyring, its logs not.
    keyring = dataclasses.replace(spec, key_provider="keyring-file")
    mysql = [options(v, keyring) for v in ("plain", "encrypted")]
    assert mysql[0]["default_table_encryption"] == "ON"
    assert option_difference(mysql[0], mysql[1]) == {
        "innodb_redo_log_encrypt": "ON",
        "innodb_undo_log_encrypt": "ON",
        "binlog_encryption": "ON",
    }


# -- the key provider ---------------------------------------------------------------------------
def test_the_key_provider_chooses_the_servers_key_options() -> None:
    """A key file: MariaDB's file_key_management reads it; MySQL's keyring file component:
    every new table encrypted, no key plugin."""
    key_file = options("encrypted", EncryptionSpec(key_provider="key-file"))
    assert key_file["plugin_load_add"] == "file_key_management"
    assert key_file["file_key_management_filename"] == str(KEY)
    keyring = options("encrypted", EncryptionSpec(key_provider="keyring-file"))
    assert keyring["default_table_encryption"] == "ON"
    assert not any("key_management" in k for k in keyring)


def test_a_key_servers_keys_are_read_by_its_plugin_and_its_token_is_in_no_record(
    tmp_path: Path,
) -> None:
    from encbench.servers import keys
    from encbench.servers.keys import KeyServerAccess

    token_file = tmp_path / "keys-token"
    keys.write_secret(token_file, "s.secret-token\n")
    access = KeyServerAccess("https://127.0.0.1:8200/v1/encbench", tmp_path / "ca.pem", token_file)
    spec = EncryptionSpec("AES_CBC", "all", key_provider="key-server")
    encrypted = server_options(
        "encrypted", spec, PATHS, port=3307, buffer_pool_mb=64, key_file=KEY,
        run_as_root=False, key_server=access,
    )  # fmt: skip
    assert encrypted["plugin_load_add"] == "hashicorp_key_management"
    assert encrypted["hashicorp_key_management_vault_url"] == access.url
    assert encrypted["hashicorp_key_management_token"] == "s.secret-token"
    assert encrypted["innodb_encrypt_log"] == "ON"  # scope all, as with a key file
    assert not any("file_key_management" in v for v in encrypted.values())
    # The option file holds the token; what is recorded holds neither it nor the CA's path.
    diff = option_difference(options("plain", spec), encrypted)
    assert "s.secret-token" not in str(diff) and str(tmp_path) not in str(diff)
    assert "s.secret-token" not in str(keys.redact(encrypted))
    # The plain side reads no key at all.
    assert "hashicorp_key_management_token" not in options("plain", spec)
