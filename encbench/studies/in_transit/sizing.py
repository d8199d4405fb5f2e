"""What the in-transit study's one server needs: disk and memory, checked before anything
starts (studies/__init__.py), and the buffer pool it runs with."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.servers.sizing import SERVER_ALLOWANCE_MB, data_dir_bytes, rows_mb
from encbench.studies.in_transit.options import transit_options


def disk_bytes(profile: Profile) -> int:
    """One server: sysbench's table, the bulk table and, while it lasts, its dump (about its
    size again)."""
    t = transit_options(profile)
    if profile.target is not None:
        # The tables are on the user's server; only a dump is written here (then deleted).
        return t.bulk_mb * 2**20 if "dump" in t.tests else 0
    bulk_bytes = 2 * t.bulk_mb * 2**20 if {"bulk", "dump"} & set(t.tests) else 0
    return data_dir_bytes(t.table_size) + bulk_bytes


def pool_mb(profile: Profile, tests: set[str]) -> int:
    """Everything in memory: this study is about the wire, not the disk."""
    t = transit_options(profile)
    data_mb = rows_mb(t.table_size)
    if tests & {"bulk", "dump"}:
        data_mb += t.bulk_mb
    return max(64, int(data_mb * 1.5) + 64)


def memory_mb(profile: Profile) -> tuple[int, str]:
    if profile.target is not None:
        return 0, "no server of encbench's: the user's server holds the data"
    pool = pool_mb(profile, set(transit_options(profile).tests))
    return pool + SERVER_ALLOWANCE_MB, (
        f"one server with a {pool:,} MB buffer pool + {SERVER_ALLOWANCE_MB} MB; use a smaller "
        "transit.bulk_mb or transit.table_size"
    )
