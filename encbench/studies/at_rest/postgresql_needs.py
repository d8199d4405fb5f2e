"""What the at-rest study's PostgreSQL cells need of this machine: PostgreSQL's programs
(and, run by root, the `postgres` user), root for the loop-mounted images and the memory
groups, ext4 with encryption; their disk and memory.  Without them they are left out, with
the reason: the whole study where PostgreSQL is its only kind, else its PostgreSQL cells
(unavailable)."""

from __future__ import annotations

import os
from pathlib import Path

from encbench.engine.machine_needs import RootNeed
from encbench.errors import BadInput
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.profiles.durations import load_seconds
from encbench.profiles.profile import Profile
from encbench.servers import fscrypt, shapes
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.studies.at_rest.postgresql_options import (
    data_mb_estimate,
    is_oltp,
    pg_at_rest_options,
    sbtest_mb_estimate,
)

MIB = 1 << 20
# Beyond twice the data's estimate on each image: the WAL (max_wal_size) and the server's
# own files.
MAX_WAL_MB = 512
IMAGE_HEADROOM_MB = MAX_WAL_MB + 512
MIN_IMAGE_MB = 1024
# The memory groups: a cpuset (every CPU encbench may use) and the memory limit.
CONTROLLERS = frozenset({"cpuset", "memory"})
WHAT_ROOT_IS_FOR = "loop-mounted filesystems and memory cgroups"


def data_mb(profile: Profile) -> int:
    """pgbench's tables, and sysbench's where a cell runs one of its scripts."""
    s = pg_at_rest_options(profile)
    sysbench_mb = (
        sbtest_mb_estimate(profile.data.tables, profile.data.table_size)
        if any(is_oltp(w) for w in s.workloads)
        else 0
    )
    return data_mb_estimate(s.scale) + sysbench_mb


def setup_s(profile: Profile) -> float:
    """Making both servers and loading pgbench's tables (100,000 rows a unit of scale) and,
    for oltp_* cells, sysbench's."""
    s = pg_at_rest_options(profile)
    rows = s.scale * 100_000
    if any(is_oltp(w) for w in s.workloads):
        rows += profile.data.rows
    return load_seconds(2, rows)


def image_mb(profile: Profile) -> int:
    """Each server's image: twice the data's estimate and a headroom."""
    return max(MIN_IMAGE_MB, 2 * data_mb(profile))


def image_bytes(profile: Profile) -> int:
    return (image_mb(profile) + IMAGE_HEADROOM_MB) * MIB


def groups_check() -> Check:
    """Memory cgroups encbench may make (root, the controllers mounted)."""
    name = "memory cgroups"
    if os.geteuid() != 0:
        return Check(name, False, "need root", "run encbench as root (sudo)")
    found = shapes.detect(CONTROLLERS)
    if isinstance(found, str):
        return Check(name, False, f"unavailable ({found})", "mount the memory controller")
    return Check(name, True, f"cgroup v{found.version}")


def filesystem_check() -> Check:
    why = fscrypt.unavailable()
    name = "encrypted ext4 on a loop device"
    if why is None:
        return Check(name, True, "possible")
    return Check(
        name, False, f"unavailable ({why})", "run as root on a kernel with ext4 encryption"
    )


def needs(profile: Profile) -> list[Check]:
    found = [pg_sandbox.programs_check(), filesystem_check(), groups_check()]
    if os.geteuid() == 0:
        found.append(checks.binary("setpriv", "util-linux"))
    if any(is_oltp(w) for w in pg_at_rest_options(profile).workloads):
        found.append(checks.binary("sysbench", "sysbench"))
    return found


def unavailable(profile: Profile) -> str | None:
    """Why this machine cannot measure the PostgreSQL cells (None: it can)."""
    missing = [c.problem() for c in needs(profile) if not c.ok]
    return "; ".join(missing) or None


def root(profile: Profile) -> RootNeed:
    return RootNeed(WHAT_ROOT_IS_FOR, without="PostgreSQL at rest")


def check(profile: Profile) -> None:
    """A policy whose cipher this kernel was built without is refused before any image."""
    s = profile.server
    missing = fscrypt.modes_not_built(
        [s.fscrypt_contents, s.fscrypt_filenames], fscrypt.kernel_config()
    )
    if missing and fscrypt.unavailable() is None:
        raise BadInput(
            f"server.fscrypt_contents, fscrypt_filenames: this kernel was built without the "
            f"cipher of {', '.join(missing)}: choose modes it has (by default AES-256-XTS, "
            "AES-256-CTS)"
        )


def check_out(profile: Profile, out: Path) -> None:
    """The servers' user must reach their directories under `out`."""
    pg_sandbox.check_reachable(out)


def disk_bytes(profile: Profile) -> int:
    """Both servers' files (the images are sparse: what is written is what is used)."""
    data = data_mb_estimate(pg_at_rest_options(profile).scale)
    return 2 * (2 * data + IMAGE_HEADROOM_MB) * MIB


def memory_mb(profile: Profile) -> tuple[int, str]:
    """Both servers at once, each its memory group's limit, in the regime that needs most."""
    s = pg_at_rest_options(profile)
    data = data_mb(profile)
    each = max(s.memory_limit_mb(r, data) for r in s.regimes)
    return 2 * each, (
        f"two PostgreSQL servers, each in a memory group of {each:,} MB (shared_buffers and "
        f"pg_at_rest.cache_allowance_mb); use a smaller pg_at_rest.scale"
    )


def plan_lines(profile: Profile) -> list[str]:
    """The images and each regime's memory, or why this machine leaves the study out."""
    s = pg_at_rest_options(profile)
    data = data_mb(profile)
    tables = f"pgbench scale {s.scale}"
    if any(is_oltp(w) for w in s.workloads):
        tables += f" and sysbench's {profile.data.tables} × {profile.data.table_size:,} rows"
    out = [
        f"  each server on its own {image_bytes(profile) // MIB:,} MiB ext4 image on a loop "
        "device (in the results directory, deleted at the end); the encrypted side's under "
        f"fscrypt {profile.server.fscrypt_contents} / {profile.server.fscrypt_filenames}",
        f"  {tables}: about {data:,} MB of data per server",
    ]
    for regime in s.regimes:
        out.append(
            f"  {regime}: shared_buffers {s.buffers_mb(regime, data):,} MB, each server's "
            f"memory group {s.memory_limit_mb(regime, data):,} MB"
        )
    return out
