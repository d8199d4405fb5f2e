"""What the at-rest study needs of this machine beyond the servers and sysbench (preflight):
perf where the profile asks for the CPU profile, the CPUs its sharing splits, and the CPUs,
memory and cgroups its instance shapes confine the servers to."""

from __future__ import annotations

from collections.abc import Sequence

from encbench import proc
from encbench.engine.machine_needs import RootNeed
from encbench.errors import BadInput
from encbench.machine import checks, placement
from encbench.machine.checks import Check
from encbench.profiles.profile import Profile
from encbench.servers import fscrypt, shapes
from encbench.servers.grants import TargetNeeds
from encbench.servers.mariadb import ways as mariadb_ways
from encbench.studies.at_rest.cells import cells, configurations
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.pair import shape_limits, shape_memory_mb


def perf_check() -> Check:
    return checks.binary("perf", "linux-perf")


def needs(profile: Profile) -> list[Check]:
    """perf, only where the profile asks for the CPU profile (`[measure] profile_cpu`); a
    key server and its client, where TDE's keys come from one."""
    found = [perf_check()] if measure_options(profile).profile_cpu else []
    if reads_key_server(profile):
        found += mariadb_ways.key_server_tools(profile.server.install)
    return found


def reads_key_server(profile: Profile) -> bool:
    """Whether encbench's own encrypted servers read TDE's keys from a key server."""
    s = profile.server
    tde = any(layer != "fs" for layer in s.encryption_layer)
    own = profile.target is None and not profile.calibration
    return own and tde and s.keys == "key-server"


def root(profile: Profile) -> RootNeed | None:
    """Instance shapes confine the servers by cgroups, which only root may make; the
    filesystem layer needs a loop device and a mount (without root those configurations
    are left out, with the reason)."""
    if profile.server.shapes:
        return RootNeed("cgroups")
    if profile.server.filesystem:
        return RootNeed("loop-mounted filesystems", without="the filesystem layer")
    return None


def optional_tools() -> list[tuple[Check, str]]:
    found = [(perf_check(), "for `[measure] profile_cpu = true`")]
    found += [
        (checks.binary(tool, package), 'for `server.encryption_layer` "fs" and "tde+fs"')
        for tool, package in fscrypt.TOOLS
    ]
    return found


# On its own databases: CREATE and DROP them (owned.py), load them with sysbench prepare
# (CREATE TABLE, INSERT, CREATE INDEX), rebuild them with ALTER TABLE … ENCRYPTED=… (which
# also needs CREATE and INSERT), read them; PROCESS for INNODB_TABLESPACES_ENCRYPTION.
TARGET_DATABASE = frozenset({"SELECT", "INSERT", "CREATE", "DROP", "ALTER", "INDEX"})
# What the stock OLTP scripts of sysbench 1.0.20 send beyond SELECT (oltp_common.lua): the
# read-only ones (oltp_point_select, oltp_read_only) nothing.
WRITES: dict[str, frozenset[str]] = {
    "oltp_read_write": frozenset({"UPDATE", "DELETE", "INSERT"}),
    "oltp_write_only": frozenset({"UPDATE", "DELETE", "INSERT"}),
    "oltp_update_index": frozenset({"UPDATE"}),
    "oltp_update_non_index": frozenset({"UPDATE"}),
    "oltp_insert": frozenset({"INSERT"}),
}


def target_needs(profile: Profile) -> TargetNeeds:
    """What a run of this profile needs of a target's login: nothing more than it sends."""
    writes = [WRITES.get(w, frozenset()) for w in measure_options(profile).workloads]
    return TargetNeeds(
        database=TARGET_DATABASE.union(*writes),
        global_=frozenset({"PROCESS"}),
        key_plugin=True,
    )


def check(profile: Profile) -> None:
    if not cells(profile):
        raise BadInput("the profile's [measure] section asks for no cells")
    check_sharing(profile)
    check_shapes(profile)
    check_layers(profile)


def check_layers(profile: Profile) -> None:
    """A run whose every configuration is the filesystem layer, on a machine that cannot
    give one, would measure nothing: refused with the reason (where TDE is among them, the
    filesystem's cells are left out instead).  Where the layer can run, a mode whose cipher
    the kernel was built without (its published build options say so) is refused now, not
    after the first server's image is made."""
    if profile.target is None and profile.server.filesystem and fscrypt.unavailable() is None:
        s = profile.server
        missing = fscrypt.modes_not_built(
            [s.fscrypt_contents, s.fscrypt_filenames], fscrypt.kernel_config()
        )
        if missing:
            raise BadInput(
                f"server.fscrypt_contents, fscrypt_filenames: this kernel was built without "
                f"the cipher of {', '.join(missing)}: choose modes it has (by default "
                "AES-256-XTS, AES-256-CTS)"
            )
    if profile.target is not None or any(s.layer == "tde" for s in configurations(profile)):
        return
    why = fscrypt.unavailable()
    if why is not None:
        raise BadInput(
            f"server.encryption_layer: {why}; run as root on a kernel with ext4 encryption, or "
            'add "tde"'
        )


def check_sharing(profile: Profile) -> None:
    """`pinned` and `duet` split the CPUs this process may use into two halves."""
    why = placement.problem(
        measure_options(profile).sharing, placement.usable_cpus(), proc.which(placement.TASKSET)
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
    if not profile.server.shapes:
        return
    found = shape_problems(
        profile, placement.usable_cpus(), shapes.mem_total_mib(), shape_memory_mb(profile)
    )
    if found:
        raise BadInput(found[0])
    controllers = {c for s in profile.server.shapes for c in shape_limits(s).controllers}
    why = shapes.problem(controllers)
    if why is not None:
        raise BadInput(why)
