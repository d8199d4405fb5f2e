"""A pair of servers' filesystems for a filesystem-encryption comparison, whatever the
database: each variant (plain, encrypted) on its own loop-mounted ext4 image of the same size,
made and mounted alike (servers/images.py), the encrypted side's directory under an fscrypt
policy (servers/fscrypt.py) with a random 512-bit key made for the run in its private
directory (0600), added to that filesystem's keyring and removed at the end.

What a study adds is its servers: where they go (`roots`), the marker each writes through its
database before the proof below the filesystem (proof/at_rest.py: `prove_images`), and when
they stop (before that proof and before `close`: nothing may hold a file open on an image
then)."""

from __future__ import annotations

import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.errors import EncbenchError
from encbench.machine import environment
from encbench.servers import fscrypt, images, keys
from encbench.servers.sandbox_dirs import remove_if_empty
from encbench.servers.variants import VARIANTS

MIB = 1 << 20


class VolumePair:
    """One pair's images (made by mount(), undone by close()) and what the record says of
    them."""

    def __init__(self, base: Path, private: Path, size_bytes: int, policy: fscrypt.Policy) -> None:
        self.base = base
        self.private = private
        self.size = size_bytes
        self.policy = policy
        config = fscrypt.kernel_config()
        self.inline_crypt = fscrypt.inline_crypt(config)
        self.options = images.mount_options(config)
        self.volumes = self._new()
        self.key: bytes | None = None

    def _new(self) -> dict[str, images.Volume]:
        return {
            v: images.Volume(self.base / f"{v}.img", self.base / v, self.size) for v in VARIANTS
        }

    def roots(self) -> dict[str, Path]:
        """Where each server's files go: its directory on its volume."""
        return {v: volume.directory for v, volume in self.volumes.items()}

    def mount(self, encrypt: bool, log: Callable[[str], None]) -> None:
        """Both images made and mounted; the encrypted side's directory under the policy
        where `encrypt` (the configuration has the filesystem layer)."""
        self.volumes = self._new()
        for variant, volume in self.volumes.items():
            encrypted = variant == "encrypted" and encrypt
            log(
                f"{variant}: a {self.size // MIB:,} MiB ext4 image on a loop device"
                + (f", fscrypt {self.policy.words()}" if encrypted else "")
            )
            if encrypted and self.key is None:
                self.key = keys.raw_key(self.private, fscrypt.KEY_BYTES)
            volume.create(
                self.options,
                self.key if encrypted else None,
                self.policy if encrypted else None,
            )

    def setup_record(self) -> dict[str, Any]:
        """How the images were made and mounted, and which kernel cipher the policy's modes
        run on (read after the encrypted side's files were made: the kernel allocates a
        mode's cipher on first use)."""
        modes = {"contents": self.policy.contents, "filenames": self.policy.filenames}
        ciphers = []
        for role, mode in modes.items():
            algorithm = fscrypt.KERNEL_ALGORITHMS[mode]
            found = fscrypt.kernel_cipher(algorithm)
            ciphers.append(
                {
                    "role": role,
                    "mode": mode,
                    "algorithm": algorithm,
                    "driver": found.driver if found else "",
                    "priority": found.priority if found else None,
                    "aes_ni": found.aes_ni if found else None,
                }
            )
        return {
            "policy": {"version": fscrypt.POLICY_VERSION_2, **modes, "padding": 32},
            "image_mib": self.size // MIB,
            "mkfs": " ".join(["mkfs.ext4", *images.MKFS_OPTIONS]),
            "mount_options": self.options,
            "inline_crypt": self.inline_crypt,
            "loop_direct_io": {
                v: images.loop_direct_io(volume.loop) for v, volume in self.volumes.items()
            },
            "ciphers": ciphers,
            "cpu_aes": bool(environment.cpu_info()["flags"].get("aes")),
            "kernel": platform.release(),
        }

    def close(self, log: Callable[[str], None]) -> str:
        """Every volume undone (the servers stopped first, by the caller); returns how the
        key left the encrypted side's keyring ("" where there was none)."""
        status = ""
        for variant, volume in self.volumes.items():
            if volume.identifier is not None:
                try:
                    status = volume.drop_key()
                    log(f"{variant}: fscrypt key {status}")
                except EncbenchError as exc:
                    status = f"not removed here ({exc}); the unmount drops it"
            left = volume.close(log)
            if left:
                log(f"{variant}: left for `encbench clean`: {'; '.join(left)}")
        remove_if_empty(self.base)
        return status
