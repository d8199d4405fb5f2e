"""Which state-transfer cells a profile asks for: per method and mariadb-backup thread count,
and for mariabackup per cipher choice of its socat stream (rsync's stunnel has one)."""

from __future__ import annotations

from encbench.profile import Profile
from encbench.results.schema import SstCell


def cells(profile: Profile) -> list[SstCell]:
    """The study's cells, in the profile's order (none when it does not run)."""
    if "state-transfer" not in profile.studies:
        return []
    spec = profile.state_transfer
    out: list[SstCell] = []
    for method in spec.methods:
        ciphers = spec.ciphers if method == "mariabackup" else [""]
        for cipher in ciphers:
            out += [SstCell(method, cipher, n) for n in spec.backup_threads]
    return out
