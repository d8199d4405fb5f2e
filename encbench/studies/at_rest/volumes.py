"""The at-rest pair's filesystems, where a configuration of the run has the filesystem layer
(profile `server.encryption_layer`): each server of every pair on its own loop-mounted ext4
image of the same size (servers/volume_pair.py), so that the device under the servers is the
same in every configuration, TDE's too; in a configuration with the filesystem layer, the
encrypted side's directory is under the profile's fscrypt policy.

The images live in the results directory (on its disk), one pair per configuration, and are
deleted with it.  The key (random, 512 bits) is the run's, in its private directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.profiles.profile import Profile
from encbench.proof import at_rest as proof
from encbench.results.store import ResultStore
from encbench.servers import fscrypt, keys
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.sizing import data_dir_bytes
from encbench.servers.variants import EncryptionSpec
from encbench.servers.volume_pair import MIB as MIB
from encbench.servers.volume_pair import VolumePair

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
    size = max(MIN_IMAGE_BYTES, 2 * data_dir_bytes(profile.data.rows) + IMAGE_HEADROOM_BYTES)
    return -(-size // MIB) * MIB


class PairVolumes(VolumePair):
    """The at-rest pair's images: the profile's size and policy, and its MariaDB servers'
    markers for the proof below the filesystem."""

    def __init__(self, store: ResultStore, profile: Profile) -> None:
        policy = fscrypt.Policy(profile.server.fscrypt_contents, profile.server.fscrypt_filenames)
        super().__init__(
            store.path / "volumes", keys.private_dir(store.path), image_bytes(profile), policy
        )

    def mount_for(self, spec: EncryptionSpec, log: Callable[[str], None]) -> None:
        """Both images for a configuration: the encrypted side's under the policy where the
        configuration has the filesystem layer."""
        self.mount(spec.fs, log)

    def prove(
        self,
        servers: dict[str, SandboxServer],
        tables: int,
        side: Callable[[str], str],
        log: Callable[[str], None],
    ) -> dict[str, Any]:
        """A marker written through each server, the server stopped (InnoDB writes every
        page and closes every file), then the witnesses below the filesystem.  The servers
        are left stopped: the next configure() starts them."""
        markers = {}
        for variant, server in servers.items():
            markers[variant] = proof.write_marker(server, tables)
            server.stop()
        return proof.prove_images(self, markers, side, log)
