"""A PostgreSQL server encbench did not start (`--target postgresql://user@host:port/`):
reached as the user's login (psycopg for encbench's own statements, pgbench and psql for the
measured clients), its password only in a password file of encbench's own
(servers/postgresql/password.py), every PG* variable of the user's environment kept from libpq
(pg_sandbox.clean_env for the children, client.py in encbench itself).  What a run needs
of it is checked by readiness.py beside it.

What encbench owns there: one database, `encbench_<12 hex of the results directory>_pgtransit`,
marked as its own by its COMMENT (`encbench run <the same 12 hex>`), created by the login
(which must have CREATEDB: no role is created, none is changed) and dropped at the end
(unless `keep`) after its marker is read again.  A database of that name without this run's
marker is refused, never dropped; one with it (a killed attempt of the same run) is made
again from the start, as a MariaDB target's databases are (servers/owned.py).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput, ServerError, ToolError
from encbench.servers.owned import run_key
from encbench.servers.postgresql import client, quote_ident
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.password import (
    MAINTENANCE_DATABASE,
    PgLogin,
    password_from,
    write_passfile,
)
from encbench.servers.target import PLAN_HINT

CONNECT_TIMEOUT_S = "10"
QUERY_TIMEOUT_S = 600.0


def database_name(store_path: str) -> str:
    return f"encbench_{run_key(store_path)}_pgtransit"


def marker(store_path: str) -> str:
    return f"encbench run {run_key(store_path)}"


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


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
    """The user's PostgreSQL, reached as the DSN's login (psycopg, servers/postgresql/client.py),
    its password in `passfile`."""

    def __init__(self, spec: PgLogin, passfile: Path, private: Path) -> None:
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

    def query(
        self,
        sql: str,
        *,
        database: str = MAINTENANCE_DATABASE,
        timeout_s: float = QUERY_TIMEOUT_S,
    ) -> list[list[str]]:
        """Rows of `sql` as the login, each a list of its columns as text; a refusal or an
        unreachable server is BadInput with the fix."""
        settings = client.settings_of(self.env(database, HARNESS))
        try:
            return client.rows(settings, sql, timeout_s, f"SQL on the {self.name}")
        except ToolError as exc:
            raise self.failure(exc) from exc

    def refusal(self, route: Route) -> str:
        """Why a connection over `route` fails, in libpq's words ("" when it connects), tried
        by psql: the measured clients' own libpq and OpenSSL, whose TLS versions and ciphers
        may differ from those inside psycopg."""
        try:
            proc.run(
                [pg_sandbox.program("psql"), "-X", "-q", "-A", "-t", "-c", "SELECT 1"],
                phase=f"a connection to the {self.name}",
                timeout_s=QUERY_TIMEOUT_S,
                env=self.env(MAINTENANCE_DATABASE, route),
            )
            return ""
        except ToolError as exc:
            words = libpq_words(exc)
            return words.split("psql: error: ", 1)[-1]

    def execute(self, *statements: str, database: str = MAINTENANCE_DATABASE) -> None:
        """The statements in turn as the login, each in its own transaction."""
        settings = client.settings_of(self.env(database, HARNESS))
        try:
            client.execute(settings, statements, QUERY_TIMEOUT_S, f"SQL on the {self.name}")
        except ToolError as exc:
            raise self.failure(exc) from exc

    def failure(self, exc: ToolError) -> BadInput | ServerError:
        """libpq's or the server's error in the user's words: who to fix it with."""
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
        self.query("SELECT 1")

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
        self.execute(f"CREATE DATABASE {quote_ident(database)}")
        try:
            self.execute(
                f"COMMENT ON DATABASE {quote_ident(database)} IS {quote_literal(run_marker)}"
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
        self.execute(f"DROP DATABASE IF EXISTS {quote_ident(database)} WITH (FORCE)")

    def sessions(self, database: str) -> int:
        """pg_stat_database.sessions of `database`: the connections made to it so far."""
        rows = self.query(
            f"SELECT sessions FROM pg_stat_database WHERE datname = {quote_literal(database)}"
        )
        return int(rows[0][0]) if rows and rows[0][0] else 0


def libpq_words(exc: ToolError) -> str:
    """The server's or libpq's own words of a failed statement or login, on one line."""
    text = " ".join(exc.tail.split()) if exc.tail else str(exc)
    return text.strip()[:300]


@contextlib.contextmanager
def login(spec: PgLogin) -> Iterator[PgTarget]:
    """The target reached with a password file in a private temporary directory, removed
    afterwards (`plan`, the checks before a run; a run's own is in its private directory)."""
    password = password_from(spec)
    with tempfile.TemporaryDirectory(prefix="encbench-pg-") as temporary:
        private = Path(temporary)
        yield PgTarget(spec, write_passfile(private, spec, password), private)


def server_certificate(spec: PgLogin) -> str:
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
