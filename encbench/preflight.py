"""What must be on the machine before a study starts, checked in a second rather than after
an hour, each with the command that fixes it.  `encbench doctor` prints the same checks."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import environment, placement, proc
from encbench.errors import BadInput
from encbench.profile import Profile
from encbench.servers import shapes
from encbench.servers.user_server import UserServer, password_from

PLUGIN_DIRS = (Path("/usr/lib/mysql/plugin"), Path("/usr/lib64/mysql/plugin"))


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _binary(name: str, package: str) -> Check:
    path = proc.which(name)
    if path:
        return Check(name, True, path)
    return Check(name, False, "not found", f"apt-get install {package} (or `make setup`)")


def tool_checks() -> list[Check]:
    checks = [
        _binary("mariadbd", "mariadb-server"),
        _binary("mariadb-install-db", "mariadb-server"),
        _binary("sysbench", "sysbench"),
        _binary("openssl", "openssl"),
    ]
    plugin = next(
        (
            d / "file_key_management.so"
            for d in PLUGIN_DIRS
            if (d / "file_key_management.so").exists()
        ),
        None,
    )
    checks.append(
        Check(
            "file_key_management plugin",
            plugin is not None,
            str(plugin or "not found"),
            "" if plugin else "apt-get install mariadb-server",
        )
    )
    return checks


def machine_checks(path: Path) -> list[Check]:
    cpu = environment.cpu_info()
    flags = cpu["flags"]
    free_gib = shutil.disk_usage(path).free / 2**30
    return [
        Check(
            "AES instructions (aes)",
            bool(flags["aes"]),
            "present" if flags["aes"] else "absent: AES runs in software, expect large costs",
        ),
        Check("vector AES (vaes)", True, "present" if flags["vaes"] else "absent (optional)"),
        Check(
            "free disk",
            free_gib > 2,
            f"{free_gib:.1f} GiB at {path.resolve()}",
            "" if free_gib > 2 else "free space or use --out on a larger disk",
        ),
    ]


def transit_checks(profile: Profile) -> list[Check]:
    """The tools the profile's in-transit cells use, beyond the at-rest study's (without `ip`,
    distance rows are skipped with the reason, not refused)."""
    if "in-transit" not in profile.studies:
        return []
    t = profile.transit
    needed = {"mariadb"}
    needed |= {"mariadb-dump"} if "dump" in t.tests else set()
    needed |= {"stunnel4"} if "stunnel" in t.methods else set()
    needed |= {"sshd", "ssh"} if "ssh" in t.methods else set()
    return [c for c in optional_transit_checks() if c.name in needed]


def state_transfer_checks(profile: Profile) -> list[Check]:
    """The state-transfer study's tools: the Galera provider, the SST scripts' helpers for
    the profile's methods, `ip` for the two emulated hosts, and fio and iperf3 for the disk's
    and the link's limits beside every result."""
    if "state-transfer" not in profile.studies:
        return []
    from encbench.servers import galera

    found = galera.provider()
    checks = [
        Check(
            "Galera provider (libgalera_smm.so)",
            found is not None,
            str(found or "not found"),
            "" if found else "apt-get install galera-4 (or `make setup`)",
        ),
        _binary("ip", "iproute2"),
        _binary("wsrep_sst_common", "mariadb-server"),
        Check(
            "root privileges",
            os.geteuid() == 0,
            "present" if os.geteuid() == 0 else "missing",
            ""
            if os.geteuid() == 0
            else "the state-transfer study's two hosts are network "
            "namespaces: run encbench as root (sudo)",
        ),
    ]
    methods = profile.state_transfer.methods
    if "mariabackup" in methods:
        checks += [_binary("mariadb-backup", "mariadb-backup"), _binary("socat", "socat")]
    if "rsync" in methods:
        checks += [_binary("rsync", "rsync"), _binary("stunnel", "stunnel4")]
    if "rsync-dir" in methods or "rsync-file" in methods:
        checks += [_binary("rsync", "rsync"), _binary("socat", "socat")]
    if "tar" in methods:
        checks += [_binary("tar", "tar"), _binary("socat", "socat")]
    if "xbstream" in methods:
        checks += [
            _binary("mariadb-backup", "mariadb-backup"),
            _binary("mbstream", "mariadb-backup"),
            _binary("socat", "socat"),
        ]
    checks = list({check.name: check for check in checks}.values())  # socat once
    return [*checks, _binary("fio", "fio"), _binary("iperf3", "iperf3")]


def unavailable_studies(profile: Profile) -> dict[str, str]:
    """The profile's optional studies that this machine cannot run, each with what it lacks
    and the fix: they are left out of the run (and named in its report), not refused."""
    out = {}
    if "state-transfer" in profile.studies and profile.state_transfer.optional:
        missing = [c for c in state_transfer_checks(profile) if not c.ok]
        if missing:
            out["state-transfer"] = "; ".join(f"{c.name} {c.detail}: {c.fix}" for c in missing)
    return out


def replication_checks(profile: Profile) -> list[Check]:
    """The replication study's tools: the Galera provider, rsync for node 2's first join,
    `ip` and root for the emulated hosts."""
    if "replication" not in profile.studies and "rejoin" not in profile.studies:
        return []
    from encbench.servers import galera

    found = galera.provider()
    root = os.geteuid() == 0
    return [
        Check(
            "Galera provider (libgalera_smm.so)",
            found is not None,
            str(found or "not found"),
            "" if found else "apt-get install galera-4 (or `make setup`)",
        ),
        _binary("ip", "iproute2"),
        _binary("wsrep_sst_common", "mariadb-server"),
        _binary("rsync", "rsync"),
        Check(
            "root privileges",
            root,
            "present" if root else "missing",
            ""
            if root
            else "the replication study's clusters live in network namespaces: run encbench "
            "as root (sudo)",
        ),
    ]


def key_rotation_checks(profile: Profile) -> list[Check]:
    """The operations study's key rotation builds encbench's key plugin at run time: a C
    compiler and MariaDB's server headers (servers/keyplugin)."""
    if "operations" not in profile.studies or ("key-rotation" not in profile.operations.operations):
        return []
    from encbench.servers import keyplugin

    name = f"key rotation: the build of {keyplugin.NAME}"
    why = keyplugin.problem()
    if why is None:
        return [Check(name, True, "a C compiler and MariaDB's server headers")]
    detail, _, fix = why.partition(": ")
    return [Check(name, False, detail, fix)]


def profile_checks(profile: Profile) -> list[Check]:
    """perf, only where the profile asks for the CPU profile (`[measure] profile_cpu`)."""
    if "at-rest" not in profile.studies or not profile.measure.profile_cpu:
        return []
    return [perf_check()]


def perf_check() -> Check:
    return _binary("perf", "linux-perf")


def optional_transit_checks() -> list[Check]:
    return [
        _binary("mariadb", "mariadb-client"),
        _binary("mariadb-dump", "mariadb-client"),
        _binary("stunnel4", "stunnel4"),
        _binary("sshd", "openssh-server"),
        _binary("ssh", "openssh-client"),
        _binary("ip", "iproute2"),
    ]


def check_ciphers(profile: Profile) -> None:
    """Each TLS 1.2 suite of the profile must be one this OpenSSL knows and one the key type
    can sign for: otherwise the server would refuse to start or every handshake would fail."""
    if "in-transit" not in profile.studies:
        return
    key = profile.transit.key_types[0]
    wanted = "RSA" if key.startswith("rsa") else "ECDSA"  # ed25519 signs like ECDSA suites
    for cipher in profile.transit.bulk_ciphers:
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


def check_sst_ciphers(profile: Profile) -> None:
    """Each TLS 1.2 suite the state-transfer cells ask socat for must be one this OpenSSL
    offers: otherwise every encrypted transfer would fail its handshake."""
    from encbench.profile import SOCAT_METHODS, SST_CIPHERS

    spec = profile.state_transfer
    if "state-transfer" not in profile.studies or not set(SOCAT_METHODS) & set(spec.methods):
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


def check_cells(profile: Profile) -> None:
    """A profile whose studies ask for nothing is a mistake, not a run of zero seconds."""
    from encbench.studies.at_rest.cells import cells as at_rest_cells
    from encbench.studies.in_transit import cells as transit_plan

    if "at-rest" in profile.studies and not at_rest_cells(profile):
        raise BadInput("the profile's [measure] section asks for no cells")
    if "in-transit" in profile.studies and not transit_plan.cells(profile):
        raise BadInput(
            "the profile's [transit] section asks for no cells: the tunnel methods take only "
            'tests "connect" and "bulk", the others need method "tls"'
        )


def check_sharing(profile: Profile) -> None:
    """`pinned` and `duet` split the CPUs this process may use into two halves."""
    if "at-rest" not in profile.studies:
        return
    why = placement.problem(
        profile.measure.sharing, placement.usable_cpus(), proc.which(placement.TASKSET)
    )
    if why is not None:
        raise BadInput(why)


def shape_problems(
    profile: Profile, cpus: Sequence[int], mem_total_mib: int | None, need: tuple[int, str]
) -> list[str]:
    """Each shape against this machine: its CPUs among those encbench may use, its memory
    under MemTotal and above what one server needs (buffer pool and allowance)."""
    out = []
    need_mb, what = need
    for s in profile.server.shapes:
        where = f"server.shapes: shape {s.name!r}"
        if s.cpus > len(cpus):
            out.append(
                f"{where} asks for {s.cpus} CPUs and encbench may use {len(cpus)} here (CPUs "
                f"{placement.cpu_list(cpus)}); give cpus = {len(cpus)} or fewer"
            )
        if s.memory_mib is None:
            continue
        if mem_total_mib is not None and s.memory_mib > mem_total_mib:
            out.append(
                f"{where} asks for {s.memory_mib:,} MiB and this machine has {mem_total_mib:,} "
                f"MiB (MemTotal); give memory_mib = {mem_total_mib:,} or less"
            )
        if s.memory_mib < need_mb:
            out.append(
                f"{where} gives the server {s.memory_mib:,} MiB and it needs about {need_mb:,} "
                f"({what}); raise memory_mib to {need_mb:,} or use less data"
            )
    return out


def check_shapes(profile: Profile) -> None:
    """Shapes that this machine cannot give, or cgroups encbench cannot use here: refused
    before anything starts, rather than measured unconfined."""
    if not profile.server.shapes:  # (the profile refuses shapes without the at-rest study)
        return
    from encbench.studies.at_rest.pair import shape_limits, shape_memory_mb

    found = shape_problems(
        profile, placement.usable_cpus(), shapes.mem_total_mib(), shape_memory_mb(profile)
    )
    if found:
        raise BadInput(found[0])
    controllers = {c for s in profile.server.shapes for c in shape_limits(s).controllers}
    why = shapes.problem(controllers)
    if why is not None:
        raise BadInput(why)


def check_target_answers(profile: Profile) -> None:
    """A target that cannot be reached or refuses the login is a wrong DSN, port or password:
    said in one line before a results directory or the capacity figures are made."""
    if profile.target is None:
        return
    spec = profile.target
    UserServer(spec.connection(), password_from(spec.defaults_extra_file)).check_alive()


def require_tools(profile: Profile | None = None) -> None:
    extra = (
        transit_checks(profile)
        + profile_checks(profile)
        + state_transfer_checks(profile)
        + replication_checks(profile)
        + key_rotation_checks(profile)
        if profile
        else []
    )
    for check in tool_checks() + extra:
        if not check.ok:
            raise BadInput(f"{check.name} {check.detail}: {check.fix}")
    if profile is not None:
        check_cells(profile)
        check_ciphers(profile)
        check_sst_ciphers(profile)
        check_sharing(profile)
        check_shapes(profile)
        check_target_answers(profile)
