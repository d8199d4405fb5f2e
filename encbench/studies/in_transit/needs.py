"""What the in-transit study needs of this machine: the client tools and tunnels its tests
and methods use (without `ip`, distance rows are skipped with the reason, not refused), and
TLS suites this OpenSSL offers and its key types can sign for."""

from __future__ import annotations

from encbench import proc
from encbench.engine.machine_needs import RootNeed
from encbench.errors import BadInput
from encbench.machine import checks
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.servers.grants import TargetNeeds
from encbench.servers.mariadb import tls
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
        # First logins' C client (connect_first), built at the run's start.
        checks.binary("cc", "gcc"),
        checks.binary("mariadb_config", "libmariadb-dev"),
    ]


def optional_tools() -> list[tuple[Check, str]]:
    return [
        (c, "for in-transit tunnels, dumps and MySQL's first logins") for c in optional_checks()
    ]


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
    # First logins are measured on encbench's own MySQL only (a target's are skipped).
    first = "connect_first" in t.tests and profile.target is None
    needed |= {"cc", "mariadb_config"} if first else set()
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
    """Each TLS suite of the profile must be one this machine's clients offer (OpenSSL's
    default list: a suite outside it, such as a Camellia one, fails every handshake) and, for
    TLS 1.2, one every key type its rows use can sign for."""
    t = transit_options(profile)
    offered = _offered_suites()
    rows = [("ciphers", suite, key) for suite in t.ciphers for key in t.key_types]
    rows += [("bulk_ciphers", suite, t.key_types[0]) for suite in t.bulk_ciphers]
    for setting, suite, key in rows:
        line = offered.get(suite)
        if line is None:
            raise BadInput(
                f"transit.{setting}: {suite!r} is not a suite this machine's OpenSSL offers "
                "by default; list them with `openssl ciphers -s -v`"
            )
        if tls.suite_version(suite) == "TLSv1.3":
            continue  # TLS 1.3 suites do not depend on the key type
        wanted = "RSA" if key.startswith("rsa") else "ECDSA"  # ed25519 signs like ECDSA
        if f"Au={wanted}" not in line:
            raise BadInput(
                f"transit.{setting}: {suite!r} cannot be used with a {key} key "
                f"({line.split()[3]}); choose a suite with Au={wanted}"
            )


def _offered_suites() -> dict[str, str]:
    """`openssl ciphers -s -v`: the suites OpenSSL's default list offers at its configured
    security level, both versions, by name (each line names its Kx and Au)."""
    out = proc.run(["openssl", "ciphers", "-s", "-v"], phase="openssl ciphers", timeout_s=30)
    return {line.split()[0]: line for line in out.stdout.splitlines() if line.strip()}
