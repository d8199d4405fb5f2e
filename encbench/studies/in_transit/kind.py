"""Which kinds of server the in-transit study measures under a profile: its target's, else
those `[server] kinds` names.  MariaDB's and MySQL's cells come first, then
PostgreSQL's, where both are named."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.servers.mariadb import installs
from encbench.studies import definition

NAME = "in-transit"
MARIADB = "mariadb"
POSTGRESQL = "postgresql"
KINDS = (MARIADB, POSTGRESQL)


def measures(profile: Profile, kind: str) -> bool:
    """Whether the profile lists this study and it measures that kind of server (its
    definition's kinds_in: the target's, else of `[server] kinds`)."""
    return definition.measures(profile, NAME, kind)


def postgresql_alone(profile: Profile) -> bool:
    return measures(profile, POSTGRESQL) and not measures(profile, MARIADB)


def problem(profile: Profile) -> str | None:
    """A private root asked of a run that measures only this host's PostgreSQL."""
    alone = profile.target is None and postgresql_alone(profile)
    if alone and profile.server.install != installs.SYSTEM:
        return (
            f'server.install = "{profile.server.install}" chooses a MariaDB or MySQL server, '
            "and the in-transit study measures only this host's PostgreSQL here: remove "
            'server.install, or add "mariadb" to server.kinds'
        )
    return None
