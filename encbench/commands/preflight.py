"""What must be on the machine before a study starts, checked in a second rather than after
an hour, each with the command that fixes it.  `encbench doctor` prints the same checks.
What only one study needs is that study's (its definition's `needs` and `check`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from encbench.errors import BadInput
from encbench.machine import environment
from encbench.machine.checks import Check, binary
from encbench.profiles.profile import Profile
from encbench.servers import server_kind, ways


def tool_checks() -> list[Check]:
    """What every run needs, whatever server it measures; a study's server brings its own
    (StudyDefinition.kinds: MariaDB's in servers/mariadb/ways.py)."""
    return [binary("openssl", "openssl")]


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


def check_target_answers(profile: Profile) -> None:
    """A target that cannot be reached or refuses the login (a wrong DSN, port or password),
    or lacks what the profile's studies need of it (privileges, a key plugin): said in one
    line, pointing to `encbench plan`, before a results directory or the capacity figures
    are made."""
    from encbench import studies

    if profile.target is None:
        return
    ways.of(profile.target.kind).target.check(profile.target, studies.target_needs(profile))


def check_own_names(profile: Profile, out: Path) -> None:
    """A database of this run's own names on the target that is not this run's, refused
    before the results directory exists: found only at set-up, it would be a failure after
    something was created (the set-up checks it again, as ownership is checked at each
    step)."""
    from encbench import studies

    spec = profile.target
    if spec is None:
        return
    key = str(out.absolute())
    names = [
        db
        for study in studies.named(profile)
        if studies.measures_target(study, profile)
        and (use := study.target_use(profile)) is not None
        for db in use.databases(key)
    ]
    if names:
        ways.of(spec.kind).target.ownership(spec, names, key)


def require_tools(profile: Profile | None = None) -> None:
    """Refuse, in one line with the fix, a run this machine cannot start: the common tools,
    then what each of the profile's studies needs and checks (studies/definition.py);
    without a profile, MariaDB's tools (the default profile's server)."""
    require_machine(profile)
    if profile is not None:
        check_target_answers(profile)


def require_machine(profile: Profile | None = None) -> None:
    """What this machine must give the profile's studies (tools, root, namespaces, their
    own checks): `run` refuses without it, and so does `plan`, with the same line."""
    from encbench import studies

    extra = studies.needs(profile) if profile else ways.of(server_kind.names()[0]).tools()
    for check in tool_checks() + extra:
        if not check.ok:
            raise BadInput(check.problem())
    if profile is not None:
        for study in studies.named(profile):
            study.here.check(profile)
