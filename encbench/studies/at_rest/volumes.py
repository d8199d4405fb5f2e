"""The at-rest pair's filesystems, where a configuration of the run has the filesystem layer
(profile `server.encryption_layer`): each server of every pair on its own loop-mounted ext4
image of the same size, made and mounted alike (servers/images.py), so that the device
under the servers is the same in every configuration, TDE's too; in a configuration with the
filesystem layer, the encrypted side's directory is under the profile's fscrypt policy.

The images live in the results directory (on its disk), one pair per configuration, and are
deleted with it.  The key (random, 512 bits) is the run's, in its private directory."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench import environment
from encbench.errors import EncbenchError
from encbench.profile import Profile
from encbench.proof import at_rest as proof
from encbench.results.store import ResultStore
from encbench.servers import fscrypt, images, keys
from encbench.servers.sandbox import SandboxServer
from encbench.servers.sandbox_dirs import remove_if_empty
from encbench.servers.sizing import BYTES_PER_ROW_ESTIMATE, SYSTEM_FILES_ESTIMATE
from encbench.servers.variants import VARIANTS, EncryptionSpec

MIB = 1 << 20
MIN_IMAGE_BYTES = 1 << 30
# Beyond the estimate of one server's files: the write workloads' growth, the binary log
# and the temporary files.
IMAGE_HEADROOM_BYTES = 512 * MIB


def uses_images(profile: Profile) -> bool:
    """Whether this run puts its servers on images: a configuration has the filesystem layer
    and this machine can give one (without root those configurations are left out)."""
    return (
        profile.server.filesystem
        and not profile.calibration
        and profile.target is None
        and fscrypt.unavailable() is None
    )


def image_bytes(profile: Profile) -> int:
    """One server's image: twice its estimated files and a headroom, in whole MiB."""
    rows = profile.data.tables * profile.data.table_size
    per_server = rows * BYTES_PER_ROW_ESTIMATE + SYSTEM_FILES_ESTIMATE  # as pair.disk_bytes
    size = max(MIN_IMAGE_BYTES, 2 * per_server + IMAGE_HEADROOM_BYTES)
    return -(-size // MIB) * MIB


class PairVolumes:
    """One pair's images (made by mount(), undone by close()) and what the record says of
    them."""

    def __init__(self, store: ResultStore, profile: Profile) -> None:
        self.store = store
        self.base = store.path / "volumes"
        self.size = image_bytes(profile)
        self.policy = fscrypt.Policy(
            profile.server.fscrypt_contents, profile.server.fscrypt_filenames
        )
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
        """Where each server's sandbox goes: its directory on its volume."""
        return {v: volume.directory for v, volume in self.volumes.items()}

    def mount(self, spec: EncryptionSpec, log: Callable[[str], None]) -> None:
        """Both images made and mounted; the encrypted side's directory under the policy
        where the configuration has the filesystem layer."""
        self.volumes = self._new()
        for variant, volume in self.volumes.items():
            encrypt = variant == "encrypted" and spec.fs
            log(
                f"{variant}: a {self.size // MIB:,} MiB ext4 image on a loop device"
                + (f", fscrypt {self.policy.words()}" if encrypt else "")
            )
            if encrypt and self.key is None:
                self.key = keys.raw_key(keys.private_dir(self.store.path), fscrypt.KEY_BYTES)
            volume.create(
                self.options, self.key if encrypt else None, self.policy if encrypt else None
            )

    def prove(
        self,
        servers: dict[str, SandboxServer],
        tables: int,
        side: Callable[[str], str],
        log: Callable[[str], None],
    ) -> dict[str, Any]:
        """The filesystem layer's witnesses (proof.prove_image) for each server: a marker
        written through it, the server stopped (every page written, every file closed: the
        key can then be removed and added back to list the names without it) and the
        filesystems synced.  The servers are left stopped: the next configure() starts them."""
        markers = {}
        for variant, server in servers.items():
            markers[variant] = proof.write_marker(server, tables)
            server.stop()
        os.sync()
        proofs = {}
        for variant, volume in self.volumes.items():
            log(f"proving {side(variant)}'s filesystem below the server (raw image, names)")
            names = None
            if volume.encrypted:
                assert self.key is not None
                names = volume.names_without_key(self.key)
            proofs[variant] = proof.prove_image(
                volume.image, markers[variant], side(variant), volume.encrypted, names
            ).to_json()
        return {"proofs": proofs}

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
