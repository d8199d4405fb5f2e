"""The two variants of the at-rest study, and what the encrypted one encrypts (EncryptionSpec:
layer, scope, algorithm, control, key provider), in the words every kind's studies share.
MariaDB's server options of each variant are servers/mariadb/options.py's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Variant = Literal["plain", "encrypted"]
VARIANTS: tuple[Variant, Variant] = ("plain", "encrypted")
Algorithm = Literal["AES_CTR", "AES_CBC"]
Scope = Literal["tables", "all"]
# Where the encrypted side encrypts: InnoDB's own encryption (TDE), the filesystem under its
# data directory (ext4 fscrypt: servers/fscrypt.py), or both.
Layer = Literal["tde", "fs", "tde+fs"]
# What the encrypted side is measured against: a plain server (as always), or a server that
# encrypts the tables alone (scope tables, same algorithm), so that a configuration of scope
# all measures, paired round by round, what the logs add on top of the tables.
Against = Literal["plain", "tables"]
FILESYSTEM_WORDS = "filesystem (fscrypt)"
# Where the encrypted server's keys come from (docs/developing.md, "Words"): MariaDB's key
# file read by its file_key_management plugin, MySQL's keyring file component, or a key
# server (Vault's API: OpenBao, servers/key_server.py) read by MariaDB's
# hashicorp_key_management plugin.  Each release has its own (servers/mariadb/installs.py:
# MySQL's community server has no key plugin and no key server client, MariaDB no keyring
# component); a profile may name it (`[server] key_provider`).
KeyProvider = Literal["key-file", "keyring-file", "key-server"]
KEY_PROVIDER_WORDS: dict[str, str] = {
    "key-file": "a key file (file_key_management)",
    "keyring-file": "MySQL's keyring file (component_keyring_file)",
    "key-server": "a key server (OpenBao, Vault's API; hashicorp_key_management)",
}
# The server's part that reads them, as the reports name it.
KEY_PROVIDER_PART: dict[str, str] = {
    "key-file": "file_key_management",
    "keyring-file": "component_keyring_file",
    "key-server": "hashicorp_key_management",
}

# How an A/A calibration names the two roles wherever a person reads it: the engine keeps
# pairing `plain` (control) with `encrypted`, but in a calibration both run the plain
# configuration, so neither is called encrypted.
CALIBRATION_SIDES: dict[str, str] = {"plain": "A (plain)", "encrypted": "B (plain twin)"}


# How a pair of scope all against scope tables names its roles: the control encrypts too.
AGAINST_TABLES_SIDES: dict[str, str] = {"plain": "scope tables", "encrypted": "scope all"}


def side_name(variant: str, calibration: bool) -> str:
    return CALIBRATION_SIDES.get(variant, variant) if calibration else variant


def configuration_label(algorithm: str, scope: str, layer: str = "tde", against: str = "") -> str:
    """A configuration in words: "AES_CTR, scope all" (TDE, named as before layers existed),
    "filesystem (fscrypt)", "AES_CTR, scope tables + filesystem (fscrypt)", "AES_CTR, scope
    all against scope tables" (its control encrypts the tables)."""
    if layer == "fs":
        return FILESYSTEM_WORDS
    tde = f"{algorithm}, scope {scope}"
    if against == "tables":
        tde += " against scope tables"
    return f"{tde} + {FILESYSTEM_WORDS}" if layer == "tde+fs" else tde


@dataclass(frozen=True)
class EncryptionSpec:
    algorithm: Algorithm = "AES_CTR"
    scope: Scope = "tables"
    layer: Layer = "tde"
    # The control side (the `plain` role): "plain", or "tables" — a server of this
    # configuration's algorithm with scope tables (only for scope all under TDE alone).
    against: Against = "plain"
    # Where TDE's keys come from (KeyProvider); the filesystem layer's key is fscrypt's own.
    key_provider: KeyProvider = "key-file"

    @property
    def control(self) -> EncryptionSpec | None:
        """What the control side encrypts: None when it is plain."""
        if self.against == "plain":
            return None
        return EncryptionSpec(self.algorithm, "tables", self.layer, key_provider=self.key_provider)

    @property
    def tde(self) -> bool:
        """Whether InnoDB encrypts (its options are set on the encrypted side)."""
        return self.layer != "fs"

    @property
    def fs(self) -> bool:
        """Whether the encrypted side's data directory is on an encrypted filesystem."""
        return self.layer != "tde"

    @property
    def label(self) -> str:
        """How reports and at-rest.json name this configuration, e.g. "AES_CTR, scope all"."""
        return configuration_label(self.algorithm, self.scope, self.layer, self.against)
