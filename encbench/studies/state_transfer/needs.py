"""What the state-transfer study needs of this machine: the Galera provider, the SST
scripts' helpers for the profile's methods, `ip` and root for the emulated hosts, fio and
iperf3 for the disk's and the link's limits beside every result, and the TLS 1.2 suites its
cells ask socat for."""

from __future__ import annotations

from encbench import proc
from encbench.errors import BadInput
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.servers.mariadb import galera
from encbench.studies.state_transfer.options import (
    SOCAT_METHODS,
    SST_CIPHERS,
    state_transfer_options,
)


def needs(profile: Profile) -> list[Check]:
    found = [
        galera.provider_check(),
        checks.binary("ip", "iproute2"),
        checks.binary("wsrep_sst_common", "mariadb-server"),
        checks.root("the state-transfer study's two hosts are network namespaces"),
    ]
    methods = state_transfer_options(profile).methods
    if "mariabackup" in methods:
        found += [
            checks.binary("mariadb-backup", "mariadb-backup"),
            checks.binary("socat", "socat"),
        ]
    if "rsync" in methods:
        found += [checks.binary("rsync", "rsync"), checks.binary("stunnel", "stunnel4")]
    if "rsync-dir" in methods or "rsync-file" in methods:
        found += [checks.binary("rsync", "rsync"), checks.binary("socat", "socat")]
    if "tar" in methods:
        found += [checks.binary("tar", "tar"), checks.binary("socat", "socat")]
    if "xbstream" in methods:
        found += [
            checks.binary("mariadb-backup", "mariadb-backup"),
            checks.binary("mbstream", "mariadb-backup"),
            checks.binary("socat", "socat"),
        ]
    return [*checks.unique(found), checks.binary("fio", "fio"), checks.binary("iperf3", "iperf3")]


def check(profile: Profile) -> None:
    """Each TLS 1.2 suite the cells ask socat for must be one this OpenSSL offers: otherwise
    every encrypted transfer would fail its handshake."""
    spec = state_transfer_options(profile)
    if not set(SOCAT_METHODS) & set(spec.methods):
        return
    for name in spec.ciphers:
        suite = SST_CIPHERS[name]
        if not suite:
            continue
        out = proc.run(
            ["openssl", "ciphers", "-s", "-tls1_2", suite],
            phase="openssl ciphers",
            timeout_s=30,
            check=False,
        )
        if out.returncode != 0 or suite not in out.stdout.strip().split(":"):
            raise BadInput(
                f"state_transfer.ciphers: {name!r} needs the TLS 1.2 suite {suite}, which this "
                "OpenSSL does not offer; list them with `openssl ciphers -s -tls1_2`"
            )
