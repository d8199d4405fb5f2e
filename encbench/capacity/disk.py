"""The disk's sequential read and write speed on one directory's filesystem, measured with
fio: the ceiling a copy of a data directory (a state transfer) cannot pass however fast its
network and cipher are.

One fio invocation, two jobs one after the other (`stonewall`) on one file: a sequential
write of 1 MiB blocks, then a sequential read of the same file, each for a fixed few
seconds (`time_based`: a small file is gone over again rather than a large one written).
Direct I/O where the filesystem allows it (probed with O_DIRECT first: tmpfs and some
overlay filesystems refuse it), so the figures are the device's, not the page cache's;
buffered otherwise, with `end_fsync` so the write at least reaches the device, and the
record says which.  The file is deleted on every exit.  `parse_fio_json` is pure and
unit-tested on a captured output (tests/golden/limits/)."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import ToolError

MIB = 2**20
FIO_HINT = "apt-get install fio (or `make setup`)"
FILE_MIB = 256
BLOCK = "1M"
SECONDS = 2  # per direction, unless the caller says otherwise
# The margin for fio's own start-up and the file's layout, over the two timed jobs.
TIMEOUT_MARGIN_S = 60
TEST_FILE = "encbench-disk-limit.fio"


@dataclass(frozen=True)
class DiskSpeed:
    """Sequential MiB/s (2^20 bytes per second) of one filesystem, as fio measured it."""

    read_mib_per_s: float
    write_mib_per_s: float
    direct: bool  # O_DIRECT (the device) or buffered (the page cache in between)
    file_mib: int
    block: str
    seconds: int  # per direction
    fio_version: str

    def __post_init__(self) -> None:
        if self.read_mib_per_s <= 0 or self.write_mib_per_s <= 0:
            raise ValueError(
                f"impossible disk speed: read {self.read_mib_per_s} MiB/s, "
                f"write {self.write_mib_per_s} MiB/s"
            )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_fio_json(text: str) -> tuple[str, dict[str, float]]:
    """fio's version and, per job name, the MiB/s of the direction it did (read or write).

    fio may print a warning before its JSON (e.g. "fio: file hash not empty on exit"), so
    the document is read from its first brace to the end of that document.  A job that
    failed (`error` ≠ 0) or moved no bytes is a ValueError: its figure would be no
    measurement."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON document in fio's output")
    data, _ = json.JSONDecoder().raw_decode(text, start)
    speeds: dict[str, float] = {}
    for job in data.get("jobs", []):
        name = str(job["jobname"])
        if int(job.get("error", 0)):
            raise ValueError(f"fio job {name} failed with error {job['error']}")
        moved = {d: job[d] for d in ("read", "write") if int(job.get(d, {}).get("io_bytes", 0))}
        if len(moved) != 1:
            raise ValueError(f"fio job {name} moved bytes in {len(moved)} directions, not 1")
        (stats,) = moved.values()
        speeds[name] = float(stats["bw_bytes"]) / MIB
    if not speeds:
        raise ValueError("fio reported no jobs")
    return str(data.get("fio version", "")), speeds


def supports_direct_io(directory: Path) -> bool:
    """Whether files in this directory can be opened with O_DIRECT (tmpfs: EINVAL)."""
    probe = directory / f".{TEST_FILE}.probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
    except OSError:
        return False
    else:
        os.close(fd)
        return True
    finally:
        probe.unlink(missing_ok=True)


def fio_argv(
    fio: str, path: Path, output: Path, *, direct: bool, seconds: int = SECONDS
) -> list[str]:
    """Options before the first --name are global (both jobs); `stonewall` makes the read
    wait for the write, which also creates the file it reads."""
    return [
        fio,
        "--output-format=json",
        f"--output={output}",
        f"--filename={path}",
        f"--size={FILE_MIB}M",
        f"--bs={BLOCK}",
        "--ioengine=psync",
        f"--direct={int(direct)}",
        "--time_based=1",
        f"--runtime={seconds}",
        "--name=write",
        "--rw=write",
        f"--end_fsync={int(not direct)}",
        "--name=read",
        "--rw=read",
        "--stonewall",
    ]


def measure_disk(directory: Path, log_dir: Path, seconds: int = SECONDS) -> DiskSpeed:
    """Sequential write then read on `directory`'s filesystem, `seconds` each; the test
    file is removed whatever happens.  fio's JSON is kept in `log_dir` for the record."""
    fio = proc.which("fio")
    if fio is None:
        raise ToolError("fio not found", phase="disk limit", hint=FIO_HINT)
    directory.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = directory / TEST_FILE
    output = log_dir / "disk-limit.fio.json"
    direct = supports_direct_io(directory)
    argv = fio_argv(fio, path, output, direct=direct, seconds=seconds)
    try:
        proc.run(
            argv, phase="disk limit (fio)", timeout_s=TIMEOUT_MARGIN_S + 2 * seconds, hint=FIO_HINT
        )
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    text = output.read_text(errors="replace") if output.exists() else ""
    try:
        version, speeds = parse_fio_json(text)
        return DiskSpeed(
            read_mib_per_s=speeds["read"],
            write_mib_per_s=speeds["write"],
            direct=direct,
            file_mib=FILE_MIB,
            block=BLOCK,
            seconds=seconds,
            fio_version=version,
        )
    except (ValueError, KeyError) as exc:
        raise ToolError(
            f"could not read fio's output: {exc}",
            argv=argv,
            phase="disk limit (fio)",
            tail="\n".join(text.splitlines()[-15:]),
        ) from exc
