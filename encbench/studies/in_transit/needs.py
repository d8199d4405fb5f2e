"""What the in-transit study needs of this machine: the client tools and tunnels its tests
and methods use (without `ip`, distance rows are skipped with the reason, not refused), and
TLS 1.2 suites this OpenSSL offers and its key type can sign for."""

from __future__ import annotations

from encbench import checks, proc
from encbench.checks import Check
from encbench.errors import BadInput
from encbench.profile import Profile
from encbench.servers.grants import TargetNeeds
from encbench.studies.definition import RootNeed
from encbench.studies.in_transit.cells import cells
from encbench.studies.in_transit.options import transit_options


def optional_checks() -> list[Check]:
    return [
        checks.binary("mariadb", "mariadb-client"),
        checks.binary("mariadb-dump", "mariadb-client"),
        checks.binary("stunnel4", "stunnel4"),
        checks.binary("sshd", "openssh-server"),
        checks.binary("ssh", "openssh-client"),
        checks.binary("ip", "iproute2"),
    ]


def optional_tools() -> list[tuple[Check, str]]:
    return [(c, "for in-transit tunnels and dumps") for c in optional_checks()]


# On a target, its own database only (target.py): CREATE and DROP it, sysbench prepare's
# table (CREATE TABLE, INSERT, CREATE INDEX) and the bulk table, read both (mariadb-dump with
# --single-transaction --skip-lock-tables: no LOCK TABLES).  No global privilege: its proof
# is status counters, which every login may read.
TARGET_NEEDS = TargetNeeds(database=frozenset({"SELECT", "INSERT", "CREATE", "DROP", "INDEX"}))


def target_needs(profile: Profile) -> TargetNeeds:
    return TARGET_NEEDS


def needs(profile: Profile) -> list[Check]:
    t = transit_options(profile)
    needed = {"mariadb"}
    needed |= {"mariadb-dump"} if "dump" in t.tests else set()
    needed |= {"stunnel4"} if "stunnel" in t.methods else set()
    needed |= {"sshd", "ssh"} if "ssh" in t.methods else set()
    return [c for c in optional_checks() if c.name in needed]


def root(profile: Profile) -> RootNeed | None:
    """A distance (rtt_ms > 0) puts the client on a network namespace of its own, which only
    root may make; without root those cells are skipped with the reason."""
    if any(rtt > 0 for rtt in transit_options(profile).rtt_ms):
        return RootNeed("network namespaces", without="the distances")
    return None


def check(profile: Profile) -> None:
    if not cells(profile):
        raise BadInput(
            "the profile's [transit] section asks for no cells: the tunnel methods take only "
            'tests "connect" and "bulk", the others need method "tls"'
        )
    check_ciphers(profile)


def check_ciphers(profile: Profile) -> None:
    """Each TLS 1.2 suite of the profile must be one this OpenSSL knows and one the key type
    can sign for: otherwise the server would refuse to start or every handshake would fail."""
    key = transit_options(profile).key_types[0]
    wanted = "RSA" if key.startswith("rsa") else "ECDSA"  # ed25519 signs like ECDSA suites
    for cipher in transit_options(profile).bulk_ciphers:
        out = proc.run(
            ["openssl", "ciphers", "-v", "-tls1_2", cipher],
            phase="openssl ciphers",
            timeout_s=30,
            check=False,
        )
        # The list also names the TLS 1.3 suites, which come first whatever is asked.
        found = [x for x in out.stdout.splitlines() if x.startswith(cipher + " ")]
        line = found[0] if found else ""
        if out.returncode != 0 or not line:
            raise BadInput(
                f"transit.bulk_ciphers: {cipher!r} is not a TLS 1.2 suite this OpenSSL "
                "offers; list them with `openssl ciphers -s -tls1_2`"
            )
        if f"Au={wanted}" not in line:
            raise BadInput(
                f"transit.bulk_ciphers: {cipher!r} cannot be used with a {key} key "
                f"({line.split()[3]}); choose a suite with Au={wanted}"
            )
