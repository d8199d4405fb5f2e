"""A PostgreSQL server encbench did not start (`--target postgresql://user@host:port/`):
reached with psql as the user's login, read only until a run creates its own database.

The password comes from PGPASSWORD, else from the user's password file (PGPASSFILE, else
~/.pgpass: its first line for this host, port and user), as libpq itself looks for it;
never from argv or the profile.  It reaches psql and pgbench only through a password file
of the run's own (mode 0600 from the start, in its private directory; `plan` and the checks
before a run use one in a private temporary directory, removed after): every PG* variable
of the user's environment is blanked for the children (pg_sandbox.clean_env).

What encbench owns there: one database, `encbench_<12 hex of the results directory>_pgtransit`,
marked as its own by its COMMENT (`encbench run <the same 12 hex>`), created by the login
(which must have CREATEDB: no role is created, none is changed) and dropped at the end
(unless `keep`) after its marker is read again.  A database of that name without this run's
marker is refused, never dropped; one with it (a killed attempt of the same run) is made
again from the start, as a MariaDB target's databases are (servers/owned.py).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput, ServerError, ToolError
from encbench.profile import TargetSpec
from encbench.servers import keys, pg_sandbox
from encbench.servers.owned import run_key
from encbench.servers.prerequisites import PLAN_HINT

# The database every cluster has, where the login's checks and CREATE/DROP DATABASE run.
MAINTENANCE_DATABASE = "postgres"
# pg_stat_database.sessions (the per-run count of connections) is PostgreSQL 14's.
MIN_VERSION_NUM = 140000
# The versions a row may ask for, each tried with one connection that allows only it: the
# server's ssl_min/max_protocol_version are not shown to every login.
PROBED_VERSIONS = ("TLSv1.2", "TLSv1.3")
CONNECT_TIMEOUT_S = "10"
QUERY_TIMEOUT_S = 600.0
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


def database_name(store_path: str) -> str:
    return f"encbench_{run_key(store_path)}_pgtransit"


def marker(store_path: str) -> str:
    return f"encbench run {run_key(store_path)}"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# -- the password ------------------------------------------------------------------------------
def _pgpass_fields(line: str) -> list[str]:
    """A password file line's five fields (`\\:` and `\\\\` escaped, as libpq reads them)."""
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def user_passfile(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("PGPASSFILE"):
        return Path(env["PGPASSFILE"])
    return Path(env.get("HOME", "/")) / ".pgpass"


def password_from(spec: TargetSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """PGPASSWORD, else the first line of the user's password file that matches the target's
    host, port and user, for any database or the maintenance one (encbench's own is not
    named yet); None without either."""
    env = os.environ if environ is None else environ
    if env.get("PGPASSWORD"):
        return env["PGPASSWORD"]
    path = user_passfile(env)
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    wanted = (spec.host, str(spec.port), MAINTENANCE_DATABASE, spec.user)
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pgpass_fields(line)
        if len(fields) == 5 and all(f in ("*", w) for f, w in zip(fields[:4], wanted, strict=True)):
            return fields[4]
    return None


def password_source(spec: TargetSpec) -> str:
    if os.environ.get("PGPASSWORD"):
        return "PGPASSWORD"
    if password_from(spec) is not None:
        return "the password file"
    return "none given"


def write_passfile(directory: Path, spec: TargetSpec, password: str | None) -> Path:
    """The run's own libpq password file for the login (0600 from the start); empty without a
    password (libpq then sends none, and a server that asks for one says so)."""
    if password is not None and "\n" in password:
        raise BadInput("the target's password holds a line break, which libpq cannot read")
    text = "" if password is None else f"*:*:*:{_escaped(spec.user)}:{_escaped(password)}\n"
    return keys.write_secret(directory / "pg-target.pgpass", text)


def _escaped(field: str) -> str:
    """A password file field: its backslashes and colons escaped, as libpq reads them."""
    return field.replace("\\", "\\\\").replace(":", "\\:")


# -- the login ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Route:
    """How a client reaches the target: the libpq settings of one side (TLS or not)."""

    sslmode: str
    tls_version: str = ""  # the only protocol version the client allows ("" : libpq's)
    root_cert: str = ""  # for verify-full: the CA of the server's certificate


# The harness's own statements (checks, CREATE and DROP DATABASE, pgbench -i): TLS where the
# server offers it, not measured.
HARNESS = Route("prefer")


class PgTarget:
    """The user's PostgreSQL, reached by psql as the DSN's login, its password in `passfile`."""

    def __init__(self, spec: TargetSpec, passfile: Path, private: Path) -> None:
        self.spec = spec
        self.passfile = passfile
        self.private = private  # where the stand-ins for the user's own certificates point
        self.name = f"target {spec.host}:{spec.port}"

    def env(self, database: str, route: Route) -> dict[str, str]:
        """A client's libpq settings: the user's own PG* variables blanked, the password from
        the password file only, no client certificate or root certificate of the user's
        ~/.postgresql read unless the target names one."""
        spec = self.spec
        values = {
            "PGHOST": spec.host,
            "PGPORT": str(spec.port),
            "PGUSER": spec.user,
            "PGDATABASE": database,
            "PGPASSFILE": str(self.passfile),
            "PGSSLMODE": route.sslmode,
            "PGSSLROOTCERT": route.root_cert or str(self.private / "no-root-cert"),
            "PGSSLCERT": spec.ssl_cert or str(self.private / "no-client-cert"),
            "PGSSLKEY": spec.ssl_key or str(self.private / "no-client-key"),
            "PGGSSENCMODE": "disable",
            "PGCONNECT_TIMEOUT": CONNECT_TIMEOUT_S,
            "PGAPPNAME": "encbench",
        }
        if route.tls_version:
            values["PGSSLMINPROTOCOLVERSION"] = route.tls_version
            values["PGSSLMAXPROTOCOLVERSION"] = route.tls_version
        return pg_sandbox.clean_env(values)

    def script(
        self,
        sql: str,
        *,
        database: str = MAINTENANCE_DATABASE,
        route: Route = HARNESS,
        timeout_s: float = QUERY_TIMEOUT_S,
    ) -> str:
        """psql's output of `sql` (on its standard input, never its command line) as the
        login; a refusal or an unreachable server is BadInput with the fix."""
        argv = [pg_sandbox.program("psql"), "-X", "-q", "-A", "-t", "-F", "\t"]
        argv += ["-v", "ON_ERROR_STOP=1", "-f", "-"]
        try:
            return proc.run(
                argv,
                phase=f"SQL on the {self.name}",
                timeout_s=timeout_s,
                stdin_text=sql,
                env=self.env(database, route),
            ).stdout
        except ToolError as exc:
            raise self.failure(exc) from exc

    def query(
        self, sql: str, *, database: str = MAINTENANCE_DATABASE, route: Route = HARNESS
    ) -> list[list[str]]:
        out = self.script(sql, database=database, route=route)
        return [line.split("\t") for line in out.splitlines() if line]

    def failure(self, exc: ToolError) -> BadInput | ServerError:
        """psql's error in the user's words: who to fix it with."""
        text = libpq_words(exc)
        refused = ("password authentication failed", "no password supplied", "no pg_hba.conf")
        if any(words in text for words in refused):
            return BadInput(
                f"{self.name}: {text}: check the user, its password (PGPASSWORD or a "
                f"password file) and the server's pg_hba.conf; {PLAN_HINT}"
            )
        unreachable = ("Connection refused", "could not translate host name", "timeout expired")
        if any(words in text for words in unreachable):
            return BadInput(
                f"{self.name}: {text}: check the target's host and port and that its "
                "server is running"
            )
        return ServerError(f"{self.name}: {text}")

    def check_alive(self) -> None:
        self.script("SELECT 1")

    # -- encbench's own database -------------------------------------------------------------
    def ownership(self, database: str, run_marker: str) -> str:
        """ "absent", or "ours" (this run's marker in its COMMENT); BadInput for anything
        else.  Only the catalogue is read."""
        rows = self.query(
            "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database "
            f"WHERE datname = {quote_literal(database)}"
        )
        if not rows:
            return "absent"
        if rows[0][0] == run_marker:
            return "ours"
        raise BadInput(
            f"database {database} exists on the {self.name} and is not this run's (no "
            f"encbench marker {run_marker!r} in its comment): encbench leaves it alone; drop "
            "or rename it yourself if it is yours, or use another --out"
        )

    def create_owned(self, database: str, run_marker: str) -> None:
        """Create `database` as the login and mark it; a marked one of this run (a killed
        attempt) is made again from the start; one that is not this run's is refused."""
        if self.ownership(database, run_marker) == "ours":
            self._drop(database)
        self.script(f"CREATE DATABASE {quote_ident(database)};\n")
        try:
            self.script(
                f"COMMENT ON DATABASE {quote_ident(database)} IS {quote_literal(run_marker)};\n"
            )
        except BaseException:
            # Created by this very call a moment ago, not yet marked: it is ours to drop.
            with contextlib.suppress(BadInput, ServerError):
                self._drop(database)
            raise

    def drop_owned(self, database: str, run_marker: str) -> None:
        """Drop `database` only when it carries this run's marker (read again first)."""
        if self.ownership(database, run_marker) == "ours":
            self._drop(database)

    def _drop(self, database: str) -> None:
        # FORCE: a client of the run that has not yet gone (a backend still exiting).
        self.script(f"DROP DATABASE IF EXISTS {quote_ident(database)} WITH (FORCE);\n")

    def sessions(self, database: str) -> int:
        """pg_stat_database.sessions of `database`: the connections made to it so far."""
        rows = self.query(
            f"SELECT sessions FROM pg_stat_database WHERE datname = {quote_literal(database)}"
        )
        return int(rows[0][0]) if rows and rows[0][0] else 0


def libpq_words(exc: ToolError) -> str:
    """The server's or libpq's own words of a failed psql, on one line, without psql's
    prefix."""
    text = " ".join(exc.tail.split()) if exc.tail else str(exc)
    for prefix in ("psql: error: ", "psql:<stdin>:"):
        if prefix in text:
            text = text.split(prefix, 1)[1]
    return text.strip()[:300]


@contextlib.contextmanager
def login(spec: TargetSpec) -> Iterator[PgTarget]:
    """The target reached with a password file in a private temporary directory, removed
    afterwards (`plan`, the checks before a run; a run's own is in its private directory)."""
    password = password_from(spec)
    with tempfile.TemporaryDirectory(prefix="encbench-pg-") as temporary:
        private = Path(temporary)
        yield PgTarget(spec, write_passfile(private, spec, password), private)


# -- what a run needs of the server ------------------------------------------------------------
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
        try:
            target.script("SELECT 1", route=Route(sslmode, version))
            return ""
        except (BadInput, ServerError) as exc:
            cause = exc.__cause__
            return libpq_words(cause) if isinstance(cause, ToolError) else str(exc)

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


def problems(facts: PgFacts, spec: TargetSpec) -> list[str]:
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


def check(spec: TargetSpec) -> None:
    """Refuse, in one line, a target that refuses the login or is not ready for a run."""
    with login(spec) as target:
        refuse(problems(read_facts(target), spec))


def plan_lines(spec: TargetSpec) -> tuple[list[str], bool]:
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


def server_certificate(spec: TargetSpec) -> str:
    """`openssl s_client -starttls postgres`'s output: the server's certificate and the
    session OpenSSL's own client got (verified against ssl_ca where given)."""
    argv = ["openssl", "s_client", "-starttls", "postgres", "-showcerts"]
    argv += ["-connect", f"{spec.host}:{spec.port}"]
    if spec.ssl_ca:
        argv += ["-CAfile", spec.ssl_ca]
    return proc.run(
        argv,
        phase="the server's certificate (openssl s_client -starttls postgres)",
        timeout_s=30,
        stdin_text="",
        check=False,
    ).stdout
