"""Whether a target is ready for a run of a profile, from the server's own answers (read
only: SHOW GRANTS, CURRENT_USER(), SHOW GLOBAL VARIABLES, INFORMATION_SCHEMA.PLUGINS and
ALL_PLUGINS), and what fixes what is not.

`run` refuses a target that is not ready in one line, before its results directory or
anything on the server exists (preflight); `plan` prints every fix — the GRANT (or CREATE
USER) statements for the account as the server sees it, and the key plugin's my.cnf lines
— and ends well, since that is when a DBA needs it.  What the studies need comes from their
definitions (TargetNeeds: studies/definition.py).
"""

from __future__ import annotations

import os
from typing import Protocol

from encbench.errors import BadInput
from encbench.servers.grants import (
    DATABASE_ORDER,
    GLOBAL_ORDER,
    OWN_DATABASES,
    Missing,
    TargetNeeds,
    account,
    create_user_statement,
    denial,
    denied_account,
    grant_statements,
    missing,
    ordered,
    reasons,
)
from encbench.servers.mariadb import key_setup, prerequisites
from encbench.servers.mariadb.prerequisites import ServerFacts
from encbench.servers.mariadb.user_server import TargetLogin, UserServer, password_from


class TargetSpec(TargetLogin, Protocol):
    """What checking and planning a target read of its `[target]` (profile.TargetSpec is
    one): said here so that servers/ does not import the profile above it."""

    @property
    def socket(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def user(self) -> str: ...


# Names like the ones a run gives its databases (owned.py): a grant must cover them all.
EXAMPLE_DATABASES = tuple(f"encbench_000000000000_{s}" for s in ("plain", "encrypted", "transit"))


def server_of(spec: TargetSpec) -> UserServer:
    return UserServer.of_target(spec)


def problems(facts: ServerFacts, needs: TargetNeeds) -> list[str]:
    """Everything that stops a run of these needs on this server, each with its fix."""
    if prerequisites.read_only(facts.variables):
        return [prerequisites.READ_ONLY]
    found = facts.server_problems() if needs.key_plugin else []
    return found + facts.privilege_problems(EXAMPLE_DATABASES, needs)


def check(spec: TargetSpec, needs: TargetNeeds) -> None:
    """Refuse, in one line, a target that cannot log in or is not ready for these needs."""
    server = server_of(spec)
    server.check_alive()
    if needs:
        prerequisites.refuse(problems(prerequisites.read_facts(server), needs))


def password_source(spec: TargetSpec) -> str:
    if "MYSQL_PWD" in os.environ:
        return "MYSQL_PWD"
    if password_from(spec.defaults_extra_file) is not None:
        return spec.defaults_extra_file
    return "none given"


def privilege_lines(who: str, lacking: Missing, needs: TargetNeeds) -> list[str]:
    if not lacking:
        given = []
        if needs.database:
            given.append(f"{', '.join(ordered(needs.database, DATABASE_ORDER))} on {OWN_DATABASES}")
        if needs.global_:
            given.append(f"{', '.join(ordered(needs.global_, GLOBAL_ORDER))} on *.*")
        return [f"  privileges: {who} has every one the run needs ({'; '.join(given)})"]
    return [
        f"  privileges: {who} lacks what the run needs; as an administrator, run:",
        *(f"    {statement}" for statement in grant_statements(who, lacking)),
        f"    (why — {reasons(lacking)})",
    ]


def denied_lines(message: str, needs: TargetNeeds) -> list[str]:
    """A login the server refused: the account it names, and what would make it."""
    who = denied_account(message) or "'USER'@'CLIENT_HOST'"
    everything = missing(needs, (), ())
    return [
        f"  login: refused — {denial(message)}",
        "    a wrong password, or no such account for this client host; if there is none, as "
        "an administrator:",
        f"    {create_user_statement(who)}",
        *(f"    {statement}" for statement in grant_statements(who, everything)),
        "    then run `encbench plan` again: the server's key plugin, buffer pool and regimes "
        "are read once the login works",
    ]


def plan_lines(spec: TargetSpec, needs: TargetNeeds, algorithm: str) -> tuple[list[str], bool]:
    """What `plan` says of the target before the studies' own lines, and whether the login
    worked (the studies' lines read the server too)."""
    where = spec.socket or f"{spec.host}:{spec.port}"
    out = [
        f"target {where} as {spec.user} (password: {password_source(spec)}); read only: "
        "SHOW GRANTS, SHOW GLOBAL VARIABLES, INFORMATION_SCHEMA.PLUGINS"
    ]
    server = server_of(spec)
    try:
        facts = prerequisites.read_facts(server)
    except BadInput as exc:
        if denied_account(str(exc)) is None:
            raise
        return out + denied_lines(str(exc), needs), False
    who = account(facts.user)
    pool_mb = int(facts.variables.get("innodb_buffer_pool_size", "0")) / 2**20
    out.append(
        f"  server: {prerequisites.family(facts.variables)} {facts.variables.get('version', '?')}"
        f", buffer pool {pool_mb:,.0f} MiB; it sees this login as {who} (CURRENT_USER())"
    )
    if prerequisites.read_only(facts.variables):
        out.append(f"  fix: {prerequisites.READ_ONLY}")
    lacking = prerequisites.missing_privileges(facts.grants, EXAMPLE_DATABASES, needs)
    out += privilege_lines(who, lacking, needs)
    others = facts.server_problems() if needs.key_plugin else []
    if needs.key_plugin and prerequisites.family(facts.variables) == "MariaDB":
        out += key_setup.lines(facts.key_plugins, key_setup.known_plugins(server), algorithm)
        others = [p for p in others if p != prerequisites.NO_KEY_PLUGIN]
    out += [f"  fix: {p}" for p in others if p != prerequisites.READ_ONLY]
    if not problems(facts, needs):
        out.append("  ready: every prerequisite holds")
    return out, True
