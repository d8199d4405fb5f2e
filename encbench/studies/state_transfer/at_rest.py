"""A donor encrypted at rest (`donor_encrypted_at_rest`): every node of the cluster runs
with file_key_management and the run's one key file (servers/keys.py, private/, mode 0600),
so the joiner can read the encrypted pages it receives; and the proof, both ways: the
donor's tables encrypted per INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION, and after a
transfer the joiner's copies read back and encrypted too.

The marker table alone is created ENCRYPTED=NO: both SST methods copy pages as they are on
disk, so an encrypted marker would never cross a plain stream in plaintext and the wire
proof's positive control could not pass."""

from __future__ import annotations

from pathlib import Path

from encbench.errors import ProofError
from encbench.servers import keys
from encbench.servers.mariadb.options import encryption_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.variants import EncryptionSpec

SPEC = EncryptionSpec()
STATES = (
    "SELECT NAME, ENCRYPTION_SCHEME FROM information_schema.INNODB_TABLESPACES_ENCRYPTION "
    "WHERE NAME LIKE %s"
)


def options(run_dir: Path) -> dict[str, str]:
    """Every node's encryption options, with the run's key file (made once, private)."""
    return encryption_options(SPEC, keys.key_file(keys.private_dir(run_dir)))


def encrypted_tables(node: SandboxServer, tables: list[str]) -> list[str]:
    """Which of `tables` (of the node's database) the node reports encrypted; each is read
    first, which opens its tablespace (a restarted node lists only those it has opened)."""
    for table in tables:
        node.query(f"SELECT 1 FROM {node.database}.{table} LIMIT 1")
    rows = node.query(STATES, (f"{node.database}/%",))
    found = {str(name).split("/", 1)[1] for name, scheme in rows if int(scheme) == 1}
    return [t for t in tables if t in found]


def row_counts(node: SandboxServer, tables: list[str]) -> dict[str, int]:
    """Each table's rows, read whole (every page decrypted)."""
    return {t: int(node.query(f"SELECT COUNT(*) FROM {node.database}.{t}")[0][0]) for t in tables}


def prove(node: SandboxServer, role: str, tables: list[str]) -> int:
    """Every one of `tables` encrypted on `role`'s node; returns how many; raises ProofError."""
    found = encrypted_tables(node, tables)
    if found != tables:
        missing = sorted(set(tables) - set(found))
        raise ProofError(
            f"the {role}'s tables {', '.join(missing)} are not encrypted at rest "
            "(INNODB_TABLESPACES_ENCRYPTION), though donor_encrypted_at_rest is set"
        )
    return len(found)


def prove_copied(joiner: SandboxServer, want: dict[str, int]) -> None:
    """After a transfer: the joiner reads every table back with the donor's row counts, and
    reports each encrypted; raises ProofError."""
    got = row_counts(joiner, list(want))
    if got != want:
        wrong = ", ".join(f"{t}: {got[t]} of {n}" for t, n in want.items() if got[t] != n)
        raise ProofError(f"the joiner read back other row counts than the donor's: {wrong}")
    prove(joiner, "joiner", list(want))
