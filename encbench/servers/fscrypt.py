"""Filesystem encryption (ext4 fscrypt), the kernel's side: the policy, the key and its
removal, set by ioctl on a directory of the filesystem; which implementation the kernel runs
for a mode (/proc/crypto); and whether this machine can give a server an encrypted
filesystem at all.  The images and mounts are servers/images.py's.

Why ioctls from Python and no tool: Debian 12 packages no `fscryptctl`, and the `fscrypt` Go
tool needs a global /etc/fscrypt.conf and per-filesystem metadata (`fscrypt setup`): state
outside the run that encbench would have to create and remove.  The kernel's own interface
is a few ioctls (linux/fscrypt.h; the kernel's Documentation/filesystems/fscrypt.rst), whose
structs are packed below; the key travels in the ioctl's struct, never in a command line.
"""

from __future__ import annotations

import errno
import fcntl
import gzip
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from encbench import proc
from encbench.errors import EncbenchError

# -- the kernel's interface (linux/fscrypt.h) ------------------------------------------------
ContentsMode = Literal["AES-256-XTS", "Adiantum"]
FilenamesMode = Literal["AES-256-CTS", "AES-256-HCTR2", "Adiantum"]
MODE_NUMBERS: dict[str, int] = {
    "AES-256-XTS": 1,
    "AES-256-CTS": 4,
    "Adiantum": 9,
    "AES-256-HCTR2": 10,
}
# The crypto API algorithm the kernel allocates for each mode (fs/crypto/keysetup.c): its
# driver, in /proc/crypto once allocated, is the implementation that runs.
KERNEL_ALGORITHMS: dict[str, str] = {
    "AES-256-XTS": "xts(aes)",
    "AES-256-CTS": "cts(cbc(aes))",
    "Adiantum": "adiantum(xchacha12,aes)",
    "AES-256-HCTR2": "hctr2(aes)",
}
# The pairs a v2 policy accepts (fs/crypto/policy.c: fscrypt_valid_enc_modes_v2), of the
# modes offered here.
VALID_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {("AES-256-XTS", "AES-256-CTS"), ("AES-256-XTS", "AES-256-HCTR2"), ("Adiantum", "Adiantum")}
)

POLICY_VERSION_2 = 2
POLICY_FLAGS_PAD_32 = 0x03  # filenames padded to 32 bytes: hides their lengths best
KEY_SPEC_TYPE_IDENTIFIER = 2
KEY_IDENTIFIER_SIZE = 16
KEY_BYTES = 64  # a v2 master key: 512 bits (AES-256-XTS takes two 256-bit keys)
KEY_STATUS_ABSENT, KEY_STATUS_PRESENT, KEY_STATUS_INCOMPLETELY_REMOVED = 1, 2, 3
REMOVAL_FILES_BUSY = 0x1

# struct fscrypt_policy_v2: version, contents and filenames modes, flags,
# log2_data_unit_size (0: the filesystem's block), 3 reserved bytes, the key's identifier.
POLICY_V2 = struct.Struct("=BBBBB3x16s")
# struct fscrypt_key_specifier (type, reserved, a 32-byte union holding the identifier) in
# each of the three below: add_key_arg (+ raw_size, key_id, flags, 7 reserved u32, then the
# raw key), remove_key_arg (+ removal_status_flags, 5 reserved), get_key_status_arg
# (+ 6 reserved in, then status, status_flags, user_count, 13 reserved out).
ADD_KEY = struct.Struct("=II32sIII28x")
REMOVE_KEY = struct.Struct("=II32sI20x")
KEY_STATUS = struct.Struct("=II32s24xIII52x")
_IOC_WRITE, _IOC_READ = 1, 2
_POLICY_V1_SIZE = 12  # the set-policy ioctl is numbered by the v1 struct, whatever version


def _ioc(direction: int, number: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (ord("f") << 8) | number


FS_IOC_SET_ENCRYPTION_POLICY = _ioc(_IOC_READ, 19, _POLICY_V1_SIZE)
FS_IOC_ADD_ENCRYPTION_KEY = _ioc(_IOC_READ | _IOC_WRITE, 23, ADD_KEY.size)
FS_IOC_REMOVE_ENCRYPTION_KEY = _ioc(_IOC_READ | _IOC_WRITE, 24, REMOVE_KEY.size)
FS_IOC_GET_ENCRYPTION_KEY_STATUS = _ioc(_IOC_READ | _IOC_WRITE, 26, KEY_STATUS.size)


def pack_policy(contents: str, filenames: str, identifier: bytes) -> bytes:
    if len(identifier) != KEY_IDENTIFIER_SIZE:
        raise ValueError(f"a key identifier has {KEY_IDENTIFIER_SIZE} bytes, not {len(identifier)}")
    return POLICY_V2.pack(
        POLICY_VERSION_2,
        MODE_NUMBERS[contents],
        MODE_NUMBERS[filenames],
        POLICY_FLAGS_PAD_32,
        0,
        identifier,
    )


def pack_add_key(raw: bytes) -> bytearray:
    """The add-key argument with the raw key after it; the kernel writes the key's
    identifier into its key specifier."""
    if len(raw) != KEY_BYTES:
        raise ValueError(f"an fscrypt v2 key here has {KEY_BYTES} bytes, not {len(raw)}")
    header = ADD_KEY.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, b"", len(raw), 0, 0)
    return bytearray(header + raw)


def identifier_of(added: bytes | bytearray) -> bytes:
    """The identifier the kernel wrote into an add-key argument."""
    _, _, union, *_ = ADD_KEY.unpack_from(added)
    return bytes(union[:KEY_IDENTIFIER_SIZE])


def pack_remove_key(identifier: bytes) -> bytearray:
    return bytearray(REMOVE_KEY.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, identifier, 0))


def pack_key_status(identifier: bytes) -> bytearray:
    return bytearray(KEY_STATUS.pack(KEY_SPEC_TYPE_IDENTIFIER, 0, identifier, 0, 0, 0))


class FscryptError(EncbenchError):
    """The kernel refused a step of the filesystem layer (`code`: its errno, 0 if none)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


def _ioctl(path: Path, request: int, arg: bytearray, what: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.ioctl(fd, request, arg, True)
        finally:
            os.close(fd)
    except OSError as exc:
        cause = os.strerror(exc.errno or 0)
        raise FscryptError(f"{what} on {path}: {cause}", exc.errno or 0) from exc


def add_key(mountpoint: Path, raw: bytes) -> bytes:
    """Add the key to the filesystem's keyring; returns its identifier (not secret: it names
    the key, as a policy and a removal do).  The argument holding the key is zeroed after."""
    arg = pack_add_key(raw)
    try:
        _ioctl(mountpoint, FS_IOC_ADD_ENCRYPTION_KEY, arg, "adding the fscrypt key")
        return identifier_of(arg)
    finally:
        arg[:] = bytes(len(arg))


def set_policy(directory: Path, contents: str, filenames: str, identifier: bytes) -> None:
    """An empty directory's policy: everything created below it is encrypted."""
    arg = bytearray(pack_policy(contents, filenames, identifier))
    _ioctl(directory, FS_IOC_SET_ENCRYPTION_POLICY, arg, "setting the fscrypt policy")


def remove_key(mountpoint: Path, identifier: bytes, missing_ok: bool = False) -> int:
    """Remove the key from the filesystem's keyring; returns the removal's status flags
    (REMOVAL_FILES_BUSY: a file was still open, and its key lingers until it is closed).
    With missing_ok, a key already gone (ENOKEY) is no error."""
    arg = pack_remove_key(identifier)
    try:
        _ioctl(mountpoint, FS_IOC_REMOVE_ENCRYPTION_KEY, arg, "removing the fscrypt key")
    except FscryptError as exc:
        if missing_ok and exc.code == errno.ENOKEY:
            return 0
        raise
    return int(REMOVE_KEY.unpack_from(arg)[3])


def key_status(mountpoint: Path, identifier: bytes) -> int:
    arg = pack_key_status(identifier)
    _ioctl(mountpoint, FS_IOC_GET_ENCRYPTION_KEY_STATUS, arg, "reading the fscrypt key's status")
    return int(KEY_STATUS.unpack_from(arg)[3])


# -- this machine ----------------------------------------------------------------------------
EXT4_ENCRYPTION = Path("/sys/fs/ext4/features/encryption")
PROC_CRYPTO = Path("/proc/crypto")
KERNEL_CONFIG = Path("/proc/config.gz")
TOOLS = (("mkfs.ext4", "e2fsprogs"), ("losetup", "mount"), ("mount", "mount"), ("umount", "mount"))


def unavailable() -> str | None:
    """Why this machine cannot give a server an encrypted filesystem, or None."""
    if os.geteuid() != 0:
        return "the filesystem layer needs root (a loop device and a mount)"
    if not EXT4_ENCRYPTION.exists():
        return "this kernel's ext4 has no encryption (no /sys/fs/ext4/features/encryption)"
    for tool, package in TOOLS:
        if proc.which(tool) is None:
            return f"{tool} not found: apt-get install {package}"
    return None


def kernel_config(path: Path = KERNEL_CONFIG) -> dict[str, str]:
    """The running kernel's build options, where it publishes them (else empty)."""
    try:
        text = gzip.decompress(path.read_bytes()).decode(errors="replace")
    except (OSError, EOFError, zlib.error):
        return {}
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.startswith("CONFIG_"):
            found[key] = value
    return found


def inline_crypt(config: dict[str, str]) -> bool:
    """Whether `-o inlinecrypt` gives encrypted files direct I/O here: the block layer's
    software fallback encrypts their bios.  Without it, ext4 serves O_DIRECT on an encrypted
    file as buffered I/O (fs/ext4/file.c: ext4_dio_supported), through the page cache."""
    wanted = ("CONFIG_FS_ENCRYPTION_INLINE_CRYPT", "CONFIG_BLK_INLINE_ENCRYPTION_FALLBACK")
    return all(config.get(key) == "y" for key in wanted)


@dataclass(frozen=True)
class KernelCipher:
    """The implementation the kernel uses for one crypto API algorithm: of the drivers
    /proc/crypto lists under that name, the one of the highest priority."""

    algorithm: str  # e.g. "xts(aes)"
    driver: str  # e.g. "xts(ecb(aes-fixed-time))" or "xts-aes-aesni"
    priority: int

    @property
    def aes_ni(self) -> bool:
        """Whether the driver runs on the CPU's AES instructions (x86's AES-NI and VAES)."""
        return any(tag in self.driver for tag in ("aesni", "aes-ni", "vaes"))


def parse_proc_crypto(text: str) -> list[dict[str, str]]:
    """/proc/crypto's blocks, one dict of `field: value` each."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, _, value = line.partition(":")
        current[key.strip()] = value.strip()
    return blocks


def kernel_cipher(algorithm: str, text: str | None = None) -> KernelCipher | None:
    """The driver the kernel chose for `algorithm` (None: not allocated, or not built)."""
    if text is None:
        try:
            text = PROC_CRYPTO.read_text()
        except OSError:
            return None
    found = [
        KernelCipher(algorithm, b.get("driver", "?"), int(b.get("priority", "0") or 0))
        for b in parse_proc_crypto(text)
        if b.get("name") == algorithm and b.get("internal", "no") == "no"
    ]
    return max(found, key=lambda c: c.priority) if found else None


@dataclass(frozen=True)
class Policy:
    """A v2 policy's modes (the profile's `fscrypt_contents`, `fscrypt_filenames`)."""

    contents: str
    filenames: str

    def words(self) -> str:
        return f"contents {self.contents}, filenames {self.filenames}"


# The kernel build option of each mode's cipher template.
MODE_CONFIG: dict[str, str] = {
    "AES-256-XTS": "CONFIG_CRYPTO_XTS",
    "AES-256-CTS": "CONFIG_CRYPTO_CTS",
    "Adiantum": "CONFIG_CRYPTO_ADIANTUM",
    "AES-256-HCTR2": "CONFIG_CRYPTO_HCTR2",
}


def modes_not_built(modes: list[str], config: dict[str, str]) -> list[str]:
    """The modes whose cipher this kernel was built without, by its published build options
    (none when it publishes none: the first file under the policy then says it)."""
    if not config:
        return []
    return sorted({m for m in modes if config.get(MODE_CONFIG[m]) not in ("y", "m")})
