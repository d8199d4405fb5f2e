"""What a run of the PostgreSQL in-transit study needs of a PostgreSQL target, read from the
server with the login (pg_roles, pg_settings, one connection without TLS and one per TLS
version), and the SQL or pg_hba.conf line that gives what it lacks: `plan` prints every
missing thing on its own line, `run` stops on the first (and how many more) in one line,
exit 2, before anything is created."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from encbench.errors import BadInput, ServerError
from encbench.servers.postgresql import quote_ident
from encbench.servers.postgresql.password import PgLogin, password_source
from encbench.servers.postgresql.target import PgTarget, Route, login
from encbench.servers.target import PLAN_HINT

# pg_stat_database.sessions (the per-run count of connections) is PostgreSQL 14's.
MIN_VERSION_NUM = 140000
# The versions a row may ask for, each tried with one connection that allows only it: the
# server's ssl_min/max_protocol_version are not shown to every login.
PROBED_VERSIONS = ("TLSv1.2", "TLSv1.3")
# What the checks read: the login's role, the server's version, TLS and state, and whether
# the proof's views may be read.  Every function and view here is readable by any login.
FACTS_SQL = (
    "SELECT current_user, r.rolsuper, r.rolcreatedb, current_setting('server_version'), "
    "current_setting('server_version_num'), current_setting('ssl'), "
    "coalesce((SELECT setting FROM pg_settings WHERE name = 'ssl_min_protocol_version'), ''), "
    "coalesce((SELECT setting FROM pg_settings WHERE name = 'ssl_max_protocol_version'), ''), "
    "pg_is_in_recovery(), current_setting('default_transaction_read_only'), "
    "has_table_privilege('pg_catalog.pg_stat_ssl', 'SELECT'), "
    "has_table_privilege('pg_catalog.pg_stat_activity', 'SELECT'), "
    "has_table_privilege('pg_catalog.pg_stat_database', 'SELECT') "
    "FROM pg_roles r WHERE r.rolname = current_user"
)


@dataclass(frozen=True)
class PgFacts:
    """What the checks read of the server, read only."""

    user: str
    superuser: bool
    createdb: bool
    version: str
    version_num: int
    ssl: bool
    ssl_min_protocol: str
    ssl_max_protocol: str
    read_only: bool
    reads_pg_stat_ssl: bool
    reads_pg_stat_activity: bool
    reads_pg_stat_database: bool
    plain_refused: str = ""  # libpq's words when sslmode=disable is refused, else ""
    tls_refused: str = ""  # and when sslmode=require is
    # The protocol versions the server accepted, one connection each.
    tls_accepted: tuple[str, ...] = ()

    def tls_versions(self) -> tuple[str, ...]:
        return self.tls_accepted


def read_facts(target: PgTarget) -> PgFacts:
    rows = target.query(FACTS_SQL)
    if len(rows) != 1 or len(rows[0]) != 13:
        raise ServerError(f"{target.name}: the login's role was not found in pg_roles")
    row = rows[0]

    def refusal(sslmode: str, version: str = "") -> str:
        return target.refusal(Route(sslmode, version))

    ssl = row[5] == "on"
    tls_refused = refusal("require") if ssl else ""
    return PgFacts(
        user=row[0],
        superuser=row[1] == "t",
        createdb=row[2] == "t",
        version=row[3],
        version_num=int(row[4]),
        ssl=row[5] == "on",
        ssl_min_protocol=row[6],
        ssl_max_protocol=row[7],
        read_only=row[8] == "t" or row[9] == "on",
        reads_pg_stat_ssl=row[10] == "t",
        reads_pg_stat_activity=row[11] == "t",
        reads_pg_stat_database=row[12] == "t",
        plain_refused=refusal("disable"),
        tls_refused=tls_refused,
        tls_accepted=tuple(
            v for v in PROBED_VERSIONS if ssl and not tls_refused and not refusal("require", v)
        ),
    )


def problems(facts: PgFacts, spec: PgLogin) -> list[str]:
    """Everything that stops a run on this server, each with the SQL (or the line) that
    fixes it, in one line."""
    who = quote_ident(facts.user)
    out = []
    if facts.version_num < MIN_VERSION_NUM:
        out.append(
            f"the server runs PostgreSQL {facts.version}: the run counts its connections with "
            "pg_stat_database.sessions, which PostgreSQL 14 and later keep; give a newer server"
        )
    if facts.read_only:
        out.append("the server is a standby or read-only: give a primary that accepts writes")
    if not (facts.superuser or facts.createdb):
        out.append(
            f"{who} may not create databases (encbench creates its own and drops it at the "
            f"end); as an administrator, run: ALTER ROLE {who} CREATEDB;"
        )
    if not facts.ssl:
        out.append(
            "ssl is off on the server (the TLS side needs it); as a superuser, with a "
            "certificate and key in ssl_cert_file and ssl_key_file, run: ALTER SYSTEM SET "
            "ssl = on; SELECT pg_reload_conf();"
        )
    for view, readable in (
        ("pg_stat_ssl", facts.reads_pg_stat_ssl),
        ("pg_stat_activity", facts.reads_pg_stat_activity),
        ("pg_stat_database", facts.reads_pg_stat_database),
    ):
        if not readable:
            out.append(
                f"{who} may not read {view} (the proof reads it); as an administrator, run: "
                f"GRANT SELECT ON pg_catalog.{view} TO {who};"
            )
    client = "THIS_HOST/32"
    if facts.plain_refused:
        out.append(
            f"the server refuses {who} without TLS ({facts.plain_refused}); the plain side "
            f"needs a pg_hba.conf line such as: host all {facts.user} {client} scram-sha-256"
        )
    if facts.tls_refused:
        out.append(
            f"the server refuses {who} over TLS ({facts.tls_refused}); the TLS side needs a "
            f"pg_hba.conf line such as: hostssl all {facts.user} {client} scram-sha-256"
        )
    for name in ("ssl_ca", "ssl_cert", "ssl_key"):
        path = getattr(spec, name)
        if path and not Path(path).is_file():
            out.append(f"target {name} {path} is not a readable file; check the path")
    return out


def refuse(found: list[str]) -> None:
    """One line: the first problem with its fix, how many more, and where all are listed."""
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise BadInput(f"{found[0].rstrip(';')}{more}; {PLAN_HINT}")


def check(spec: PgLogin) -> None:
    """Refuse, in one line, a target that refuses the login or is not ready for a run."""
    with login(spec) as target:
        refuse(problems(read_facts(target), spec))


def plan_lines(spec: PgLogin) -> tuple[list[str], bool]:
    """What `plan` says of the target, read only, each missing thing on its own line with its
    fix; and whether the login worked."""
    out = [
        f"target {spec.host}:{spec.port} as {spec.user} (password: {password_source(spec)}); "
        "read only: pg_roles, pg_settings, one connection without TLS and one per TLS version"
    ]
    with login(spec) as target:
        try:
            facts = read_facts(target)
        except BadInput as exc:
            who = quote_ident(spec.user)
            refused = [
                f"  login: refused — {str(exc).split(f'; {PLAN_HINT}')[0]}",
                "    if there is no such role, as an administrator: "
                f"CREATE ROLE {who} LOGIN PASSWORD '…' CREATEDB;",
            ]
            return [*out, *refused], False
    versions = ", ".join(facts.tls_versions()) if facts.ssl else "none (ssl = off)"
    out.append(
        f"  server: PostgreSQL {facts.version}; ssl = {'on' if facts.ssl else 'off'}, "
        f"protocol versions it accepts: {versions}; the login is {quote_ident(facts.user)}"
        + (" (superuser)" if facts.superuser else "")
    )
    found = problems(facts, spec)
    out += [f"  fix: {p}" for p in found]
    if not found:
        out.append("  ready: every prerequisite holds")
    return out, True
