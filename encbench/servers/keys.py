"""Secrets of one run: encryption key files and passwords, in the run's private directory.

Files are created with mode 0600 from the start (os.open with the mode, never chmod after
writing) so that no other user can read them even for an instant.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path


def private_dir(run_dir: Path) -> Path:
    path = run_dir / "private"
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def write_secret(path: Path, content: str | bytes) -> Path:
    """Text, or raw bytes (a key handed to the kernel as it is)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb" if isinstance(content, bytes) else "w") as f:
        f.write(content)
    os.chmod(path, 0o600)
    return path


def key_file(directory: Path, name: str = "encryption.keys") -> Path:
    """A file_key_management key file: key id 1, a random 256-bit AES key in hex."""
    path = directory / name
    if not path.exists():
        write_secret(path, f"1;{secrets.token_hex(32)}\n")
    return path


def raw_key(directory: Path, size: int, name: str = "fscrypt.key") -> bytes:
    """A random key of `size` bytes in its own file (made once per run; a resumed run reads
    it back): the filesystem layer's, which goes to the kernel in an ioctl's struct, never
    on a command line."""
    path = directory / name
    if not path.exists():
        write_secret(path, secrets.token_bytes(size))
    key = path.read_bytes()
    if len(key) != size:
        raise ValueError(f"{path.name} holds {len(key)} bytes, not {size}")
    return key


def versioned_key_file(directory: Path, versions: int, name: str = "rotation.keys") -> Path:
    """encbench_key_management's key file (servers/mariadb/keyplugin): key id 1 in `versions`
    versions, each its own random 256-bit AES key, one `1;version;hex` line each.  The plugin
    reads it once at start-up, so every version a run will rotate to is made now.  An
    existing file (a resumed run) is kept if it holds enough versions."""
    if versions < 1:
        raise ValueError(f"a key file needs at least one version, not {versions}")
    path = directory / name
    if path.exists() and len(path.read_text().splitlines()) >= versions:
        return path
    lines = [f"1;{v};{secrets.token_hex(32)}" for v in range(1, versions + 1)]
    write_secret(path, "\n".join(lines) + "\n")
    return path


def password(directory: Path, name: str) -> str:
    path = directory / f"{name}.password"
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(24)
    write_secret(path, value + "\n")
    return value


def remove_private(run_dir: Path) -> None:
    """Delete the run's keys, passwords and certificates once every cell is measured: kept
    until then only so that --resume can restart the same servers."""
    path = run_dir / "private"
    if path.is_dir():
        shutil.rmtree(path)


# The options that name a key file (file_key_management's, encbench_key_management's).
KEY_FILE_OPTIONS = frozenset({"file_key_management_filename", "encbench_key_management_filename"})
# A key server's token, in the server's option file (0600) alone.
TOKEN_OPTIONS = frozenset({"hashicorp_key_management_token", "hashicorp-key-management-token"})


def redact_tokens(options: dict[str, str]) -> dict[str, str]:
    """Options with a key server's token left out (it lives in the server's option file)."""
    hidden = "<token in the server's option file>"
    return {k: hidden if k in TOKEN_OPTIONS else v for k, v in options.items()}


def redact(options: dict[str, str]) -> dict[str, str]:
    """Options as recorded with the results: the key file's path and a key server's token
    are not published."""
    hidden = "<key file in private/>"
    return {k: hidden if k in KEY_FILE_OPTIONS else v for k, v in redact_tokens(options).items()}


@dataclass(frozen=True)
class KeyServerAccess:
    """What a database server is given to read its keys from a key server
    (servers/key_server.py): where (its KV mount's URL), the CA its certificate is checked
    against, and the file of its token (0600; the token goes into the server's own option
    file, 0600, and nowhere else)."""

    url: str
    ca: Path
    token_file: Path

    def token(self) -> str:
        return self.token_file.read_text().strip()
