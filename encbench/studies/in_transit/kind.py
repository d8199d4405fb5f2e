"""Which kind of server the in-transit study measures under a profile: a target's own, else
the one `[server] kinds` names.  Each kind has its clients, servers, proofs and records
(MariaDB's and MySQL's in this package's modules, PostgreSQL's in postgresql/); a run
measures one kind, since its rounds meet one server."""

from __future__ import annotations

from encbench.profile import Profile
from encbench.servers import installs

NAME = "in-transit"
KINDS = ("mariadb", "postgresql")


def measured(profile: Profile) -> str:
    """The kind of server a run of this profile measures (MariaDB's, when none of `[server]
    kinds` is one this study measures: such a profile is refused by `problem`)."""
    if profile.target is not None:
        return profile.target.kind
    return next((k for k in profile.server.kinds if k in KINDS), KINDS[0])


def measures(profile: Profile, kind: str) -> bool:
    """Whether the profile lists this study and it measures that kind."""
    return NAME in profile.studies and measured(profile) == kind


def problem(profile: Profile) -> str | None:
    """A profile whose `[server] kinds` asks this study for more than one kind."""
    if NAME not in profile.studies or profile.target is not None:
        return None
    asked = [k for k in profile.server.kinds if k in KINDS]
    if len(asked) > 1:
        return (
            f"server.kinds: the in-transit study measures one kind of server a run, and "
            f"{' and '.join(asked)} are given: list one, or run the profile once per kind"
        )
    if asked == ["postgresql"] and profile.server.install != installs.SYSTEM:
        return (
            f'server.install = "{profile.server.install}" chooses a MariaDB or MySQL server, '
            "and the in-transit study measures this host's PostgreSQL: remove server.install"
        )
    return None
