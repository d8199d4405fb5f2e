"""A server's own filesystem for the at-rest study's filesystem layer: an ext4 image in the
results directory, on a loop device, mounted, and — on the encrypted side — one directory
under an fscrypt policy (servers/fscrypt.py), so that the kernel encrypts every file the
server writes there.

A Volume's life (create, then close): the record first (so that `encbench clean` can undo
what a killed run left), then the image (a sparse file, truncate(2); `mkfs.ext4 -O encrypt`
with fixed options), its loop device (`losetup --find --show`, direct I/O), the mount, and
on the encrypted side the key in the filesystem's keyring and the policy on an empty
directory.  close() undoes them in reverse, each step tried whatever the one before did: the
key removed, unmounted, the loop device detached, the image deleted.  clean_stale() does the
same for a dead run's records, touching only a mount whose device is a loop device of the
recorded image, and only loop devices of that image.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from encbench import proc, state
from encbench.errors import BadInput
from encbench.servers import fscrypt
from encbench.servers.fscrypt import FscryptError, Policy

# Every image is made and mounted alike, so that the device under each server is the same.
# lazy_*_init=0: mkfs writes the inode tables and journal now, instead of ext4lazyinit
# writing them in the background while rounds are measured.
MKFS_OPTIONS = (
    "-F", "-q", "-O", "encrypt", "-b", "4096", "-m", "0",
    "-E", "lazy_itable_init=0,lazy_journal_init=0", "-L", "encbench",
)  # fmt: skip
BASE_MOUNT_OPTIONS = "nodev,nosuid"
KIND = "volumes"  # its records, under encbench's state folder
TOOL_TIMEOUT_S = 120.0


def mount_options(config: dict[str, str]) -> str:
    """The same for every image: with `inlinecrypt` where the kernel can keep O_DIRECT on
    encrypted files that way (fscrypt.inline_crypt)."""
    return BASE_MOUNT_OPTIONS + (",inlinecrypt" if fscrypt.inline_crypt(config) else "")


@dataclass
class VolumeRecord:
    """What `encbench clean` needs to undo a killed run's volume, and whose it was."""

    image: str
    mountpoint: str
    run_id: str
    owner_pid: int
    owner_start_ticks: int | None
    loop: str = ""
    key_identifier: str = ""  # hex; names the key in the filesystem's keyring (no secret)

    @property
    def owner(self) -> proc.RunIdentity:
        return proc.RunIdentity(self.run_id, self.owner_pid, self.owner_start_ticks)

    @property
    def file(self) -> Path:
        name = hashlib.sha256(self.image.encode()).hexdigest()[:16]
        return state.folder(KIND) / f"{Path(self.image).stem}-{name}.json"

    def save(self) -> None:
        self.file.write_text(json.dumps(asdict(self)))


def _records() -> list[VolumeRecord]:
    return state.read_records(KIND, lambda data: VolumeRecord(**data))


def _run(argv: list[str], phase: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return proc.run(argv, phase=phase, timeout_s=TOOL_TIMEOUT_S, check=check)


def loops_of(image: Path) -> list[str]:
    """The loop devices attached to this image file (`losetup -j`)."""
    out = _run(["losetup", "-j", str(image)], "losetup -j", check=False).stdout
    return [line.split(":", 1)[0] for line in out.splitlines() if line.startswith("/dev/loop")]


def _attached(loop: str, image: Path, wait_s: float = 2.0) -> bool:
    """Whether this loop device is still attached to the image once an autoclear detach,
    which the kernel does after the last unmount, has had a moment."""
    deadline = time.monotonic() + wait_s
    while loop in (loops_of(image) if image.exists() else []):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.1)
    return False


def mount_source(mountpoint: Path) -> str | None:
    """The device mounted at this path (None: nothing is), from /proc/mounts."""
    where = os.path.realpath(mountpoint)
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 1 and fields[1].replace("\\040", " ") == where:
                return fields[0]
    return None


def loop_direct_io(loop: str) -> bool:
    """Whether the loop device reads and writes its image with O_DIRECT (so that the host's
    page cache does not serve the reads an io-bound cell means to reach the disk)."""
    with contextlib.suppress(OSError):
        return (Path("/sys/block") / Path(loop).name / "loop" / "dio").read_text().strip() == "1"
    return False


class Volume:
    """One server's filesystem: an ext4 image on a loop device, mounted at `mountpoint`;
    `directory` (below it) is the server's, under an fscrypt policy where create() is given
    a key and a policy."""

    def __init__(self, image: Path, mountpoint: Path, size_bytes: int) -> None:
        self.image = image.absolute()
        self.mountpoint = mountpoint.absolute()
        self.directory = self.mountpoint / "server"
        self.size_bytes = size_bytes
        owner = proc.current_run()
        self.record = VolumeRecord(
            str(self.image), os.path.realpath(self.mountpoint), owner.run_id, owner.pid,
            owner.start_ticks,
        )  # fmt: skip
        self.identifier: bytes | None = None
        self.policy: Policy | None = None

    @property
    def loop(self) -> str:
        return self.record.loop

    @property
    def encrypted(self) -> bool:
        return self.policy is not None

    def create(self, options: str, key: bytes | None = None, policy: Policy | None = None) -> None:
        """Image, loop device, mount and, with a key and a policy, the encrypted directory;
        recorded before each step.  On failure, what was made is undone."""
        if mount_source(self.mountpoint) is not None or loops_of(self.image):
            raise BadInput(
                f"{self.mountpoint} is still mounted by an earlier run: run `encbench clean` first"
            )
        self.record.save()
        try:
            self._make(options, key, policy)
        except BaseException:
            self.close()
            raise

    def _make(self, options: str, key: bytes | None, policy: Policy | None) -> None:
        self.image.parent.mkdir(parents=True, exist_ok=True)
        # A sparse file of the size (truncate(2)): the disk holds only what is written.
        with open(self.image, "wb") as f:
            os.truncate(f.fileno(), self.size_bytes)
        _run(["mkfs.ext4", *MKFS_OPTIONS, str(self.image)], "mkfs.ext4 (filesystem layer)")
        out = _run(
            ["losetup", "--find", "--show", "--direct-io=on", str(self.image)],
            "losetup (filesystem layer)",
        ).stdout
        # Its output may carry a warning beside the device's name.
        self.record.loop = next((w for w in out.split() if w.startswith("/dev/loop")), "")
        if not self.record.loop:
            raise FscryptError(f"losetup gave no loop device for {self.image}: {out.strip()!r}")
        self.record.save()
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        _run(
            ["mount", "-t", "ext4", "-o", options, self.loop, str(self.mountpoint)],
            "mount (filesystem layer)",
        )
        self.directory.mkdir()
        if key is None or policy is None:
            return
        self.identifier = fscrypt.add_key(self.mountpoint, key)
        self.record.key_identifier = self.identifier.hex()
        self.record.save()
        fscrypt.set_policy(self.directory, policy.contents, policy.filenames, self.identifier)
        self.policy = policy
        self._probe()

    def _probe(self) -> None:
        """A file made and removed under the policy: a kernel without the mode's cipher
        refuses here, in words, rather than in mariadb-install-db's output."""
        probe = self.directory / ".encbench-probe"
        try:
            probe.write_bytes(b"probe")
            probe.unlink()
        except OSError as exc:
            cause = os.strerror(exc.errno or 0)
            if exc.errno == errno.ENOPKG:
                cause = "this kernel lacks the cipher of the policy's modes"
            assert self.policy is not None
            raise FscryptError(
                f"a file under the fscrypt policy ({self.policy.words()}) cannot be made: "
                f"{cause}; choose other modes (server.fscrypt_contents, fscrypt_filenames)"
            ) from exc

    def names_without_key(self, key: bytes) -> tuple[list[str], list[str]]:
        """The directory's names with the key, then as the kernel lists them without it (the
        key removed, then added back): the second witness of the layer.  Every file below
        must be closed (its server stopped), or the key lingers and the names stay readable."""
        assert self.identifier is not None
        real = sorted(os.listdir(self.directory))
        fscrypt.remove_key(self.mountpoint, self.identifier)
        try:
            hidden = sorted(os.listdir(self.directory))
        finally:
            if fscrypt.add_key(self.mountpoint, key) != self.identifier:
                raise FscryptError("the fscrypt key came back under another identifier")
        return real, hidden

    def drop_key(self) -> str:
        """Remove the key from the filesystem's keyring (its server stopped): how the kernel
        says it went ("removed", or held by a file still open until the unmount).  Only on
        the encrypted side: its one caller asks where a key was added."""
        assert self.identifier is not None
        identifier = self.identifier
        flags = fscrypt.remove_key(self.mountpoint, identifier, missing_ok=True)
        status = fscrypt.key_status(self.mountpoint, identifier)
        self.identifier = None
        self.record.key_identifier = ""
        self.record.save()
        if status == fscrypt.KEY_STATUS_ABSENT:
            return "removed"
        busy = " (a file was still open)" if flags & fscrypt.REMOVAL_FILES_BUSY else ""
        return f"incompletely removed{busy}; the unmount drops it"

    def close(self, log: Callable[[str], None] | None = None) -> list[str]:
        """Undo every step, each tried whatever the last did; never raises.  Returns what
        could not be undone (the record then stays for `encbench clean`)."""
        undone = undo(self.record)
        if log is not None:
            for line in undone.left:
                log(f"filesystem layer: {line}")
        self.identifier = None
        return undone.left


@dataclass
class Undone:
    """What undo() did, and what it could not."""

    done: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def undo(record: VolumeRecord) -> Undone:
    """Remove the key, unmount, detach and delete what the record names — only a mount whose
    device is a loop device of the recorded image.  When nothing is left, the record goes."""
    image, mountpoint = Path(record.image), Path(record.mountpoint)
    result = Undone()
    loops = loops_of(image) if image.exists() else []
    source = mount_source(mountpoint)
    if source is not None and source in loops:
        if record.key_identifier:
            try:
                fscrypt.remove_key(
                    mountpoint, bytes.fromhex(record.key_identifier), missing_ok=True
                )
                result.done.append("key removed")
            except (FscryptError, ValueError) as exc:
                result.left.append(f"its key: {exc}")
        umount = _run(["umount", str(mountpoint)], "umount", check=False)
        if umount.returncode == 0:
            result.done.append(f"{mountpoint} unmounted")
        else:
            result.left.append(f"{mountpoint} still mounted: {umount.stdout.strip()[-200:]}")
    for loop in loops:
        if _run(["losetup", "-d", loop], "losetup -d", check=False).returncode == 0:
            result.done.append(f"{loop} detached")
        elif not _attached(loop, image):
            # Attached with autoclear: the unmount detached it (or is about to).
            result.done.append(f"{loop} detached")
        else:
            result.left.append(f"{loop} still attached to {image}")
    if not result.left:
        image.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            mountpoint.rmdir()  # only if empty: nothing of ours is left in it
        record.file.unlink(missing_ok=True)
    return result


def clean_stale(include_live_runs: bool = False, only: proc.RunIdentity | None = None) -> list[str]:
    """The volumes of runs that are gone (after their servers were stopped): one line per
    volume removed or kept."""
    actions = []
    for record in _records():
        if not proc.to_clean(record.owner, include_live_runs, only):
            continue
        undone = undo(record)
        if undone.left:
            actions.append(f"kept volume {record.image}: {'; '.join(undone.left)}")
        else:
            steps = f" ({', '.join(undone.done)})" if undone.done else ""
            actions.append(f"removed volume {record.image}{steps}")
    return actions
