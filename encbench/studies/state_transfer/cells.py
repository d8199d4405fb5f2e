"""Which state-transfer cells a profile asks for: per method (an SST method or a raw
pipeline) and thread count where the method has threads, per cipher choice where socat
carries the stream (rsync's stunnel has one), and with AES-NI on or off."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.studies.state_transfer.options import (
    SOCAT_METHODS,
    THREADED_METHODS,
    state_transfer_options,
)
from encbench.studies.state_transfer.records import SstCell


def cells(profile: Profile) -> list[SstCell]:
    """The study's cells, in the profile's order (none when it does not run)."""
    if "state-transfer" not in profile.studies:
        return []
    spec = state_transfer_options(profile)
    out: list[SstCell] = []
    for method in spec.methods:
        ciphers = spec.ciphers if method in SOCAT_METHODS else [""]
        threads = spec.backup_threads if method in THREADED_METHODS else [1]
        for cipher in ciphers:
            out += [SstCell(method, cipher, n, aesni) for aesni in spec.aesni for n in threads]
    return out
