"""PostgreSQL's side of the in-transit study against a server encbench did not start (`--target
postgresql://user@host:port/`): plain TCP (sslmode=disable) against the server's own TLS,
from this host, as the user's login, in a database encbench creates, marks and drops
(servers/postgresql/target.py).  No role is created and no setting of the server is changed.

A target is not a sandbox, so what a sandbox varies is the server's own here:
- the certificate: the first key type's rows are measured with whatever certificate the
  server has (described from `openssl s_client -starttls postgres`, recorded as the rows'
  key); the other key types' rows are skipped with the reason;
- the TLS version: the client allows only the row's version (libpq's
  ssl_min/max_protocol_version), so a row is measured where the server accepts that version
  (its own ssl_min/max_protocol_version, read from pg_settings) and skipped otherwise;
- verify-full needs the CA of the server's certificate (`?sslrootcert=FILE`, `[target]
  ssl_ca`); without it those rows are skipped with that reason.

The proof: per row, one connection per route asks pg_stat_ssl about itself, as against a
sandbox.  Per run, the server's log of its connections is not readable from here: the
run's connections are counted by pg_stat_database.sessions of encbench's own database (only
the run's clients connect to it), and the TLS of each is libpq's own guarantee —
sslmode=disable never starts TLS, require and verify-full refuse a connection without it,
and the client allows only the row's protocol version.  The server's CPU is not measured
(its processes are not on this host).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

from encbench import proc
from encbench.engine.clocks import Clocks
from encbench.engine.study import CellSkipped, Run
from encbench.errors import EncbenchError
from encbench.net.distance import Hosts
from encbench.profiles.profile import Profile, TargetSpec
from encbench.proof.server_certificate import describe_key, parse_s_client
from encbench.servers import leftovers
from encbench.servers.owned import PLACEHOLDER_KEY
from encbench.servers.postgresql import copy_table, pgbench, quote_ident, sessions
from encbench.servers.postgresql import password as pg_password
from encbench.servers.postgresql import readiness as pg_readiness
from encbench.servers.postgresql import target as pg_target
from encbench.servers.postgresql.readiness import PgFacts
from encbench.servers.postgresql.target import PgTarget, Route
from encbench.servers.target import Alive
from encbench.studies.in_transit import postgresql_proof as proof
from encbench.studies.in_transit.cells import TARGET_KEY, postgresql_cells
from encbench.studies.in_transit.postgresql_server import PgTransit
from encbench.studies.in_transit.records import TransitCell
from encbench.studies.in_transit.side import ClientRun, RunProof, Side, SideContext

# How long a run's last backends may take to count their sessions once the client is gone.
SESSIONS_WAIT_S = 10.0
# The server's TLS settings the record keeps (not its files' paths, not a passphrase command).
TLS_SETTINGS = (
    "ssl",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "ssl_ciphers",
    "ssl_ecdh_curve",
    "ssl_prefer_server_ciphers",
    "ssl_library",
)


def skip_reason(cell: TransitCell, spec: TargetSpec, accepted: Sequence[str]) -> str | None:
    """Why a cell cannot be measured against the target, or None."""
    if cell.rtt_ms > 0:
        return (
            "an emulated distance puts encbench's own server in a network namespace; a "
            "target is measured over this host's own route to it"
        )
    if cell.key_type != TARGET_KEY:
        return (
            "the server's certificate is the user's own (one key type, recorded as proof); "
            "other key types need certificates encbench does not install there"
        )
    if cell.sslmode == "verify-full" and not spec.ssl_ca:
        return (
            "verify-full checks the server's certificate against its CA: give "
            "?sslrootcert=FILE in the DSN (or [target] ssl_ca) to measure it"
        )
    if cell.tls_version not in accepted:
        return (
            f"the server accepts {', '.join(accepted) or 'no TLS'} (one connection tried at "
            "each version; its ssl_min/max_protocol_version are not encbench's to change)"
        )
    return None


class PgTransitTarget(PgTransit):
    """PostgreSQL's side against the user's server (module doc)."""

    def __init__(self, context: SideContext) -> None:
        super().__init__(context)
        assert self.profile.target is not None, "a PostgreSQL target needs [target]"
        self.target_spec = self.profile.target
        password = pg_password.password_from(self.target_spec)
        passfile = pg_password.write_passfile(self.private, self.target_spec, password)
        self.target = PgTarget(self.target_spec, passfile, self.private)
        path = str(self.store.path.absolute())
        self.database = pg_target.database_name(path)
        self.marker = pg_target.marker(path)
        self.facts: PgFacts | None = None
        self.created = False
        self.record.setdefault("skipped", {})

    # -- the target --------------------------------------------------------------------------
    @contextlib.contextmanager
    def setup(  # type: ignore[override]
        self, hosts: Hosts, todo: Sequence[TransitCell]
    ) -> Iterator[PgTarget]:
        with contextlib.ExitStack() as stack:
            # Last of all, after the database is dropped: the user's password leaves the
            # results directory whatever the end (a --resume writes it again).
            stack.callback(self.target.passfile.unlink, missing_ok=True)
            self._provision_target(stack, {c.test for c in todo})
            yield self.target

    def _provision_target(self, stack: contextlib.ExitStack, tests: set[str]) -> None:
        target, spec = self.target, self.target_spec
        facts = pg_readiness.read_facts(target)
        pg_readiness.refuse(pg_readiness.problems(facts, spec))
        self.facts = facts
        target.ownership(self.database, self.marker)  # refused before anything is created
        self.progress.log(f"pg-in-transit: creating {self.database} on the {target.name}")
        stack.callback(self._close)
        target.create_owned(self.database, self.marker)
        self.created = True
        self.progress.log(f"pg-in-transit: pgbench -i, scale {self.rule.scale}")
        proc.run(
            pgbench.init_argv(self.rule.scale),
            phase="pgbench -i",
            timeout_s=600,
            stdout_path=self.store.path / "logs" / "pgbench-init.log",
            env=target.env(self.database, pg_target.HARNESS),
        )
        self.select1.write_text(pgbench.SELECT1_SCRIPT)
        if "copy" in tests:
            self.progress.log(f"pg-in-transit: a table of about {self.rule.copy_mb} MiB to copy")
            reader = quote_ident(facts.user)
            target.execute(
                *copy_table.create_sql(self.rule.copy_mb, reader), database=self.database
            )
            stream = target.query(copy_table.STREAM_BYTES_SQL, database=self.database)[0][0]
            self.record["bulk_table"] = {
                "rows": copy_table.rows_for(self.rule.copy_mb),
                "bytes": int(stream),
            }
        self.record["postgresql_version"] = facts.version
        self.record["scale"] = self.rule.scale
        self.record["server_user"] = None
        self.record["target"] = {
            "server": target.name,
            "database": self.database,
            "tls_versions": list(facts.tls_versions()),
        }
        self._record_server_tls()
        self.book.save()

    def _record_server_tls(self) -> None:
        """The server's TLS settings as it reports them, and its certificate's key."""
        names = ", ".join(f"'{n}'" for n in TLS_SETTINGS)
        rows = self.target.query(f"SELECT name, setting FROM pg_settings WHERE name IN ({names})")
        self.record.setdefault("server_settings", {})[TARGET_KEY] = {
            row[0]: row[1] for row in rows if len(row) == 2
        }
        try:
            seen = parse_s_client(pg_target.server_certificate(self.target_spec))
            cert = self.private / "target-server-cert.pem"
            cert.write_text(seen.certificate_pem)
            text = proc.run(
                ["openssl", "x509", "-in", str(cert), "-noout", "-text"],
                phase="describe the server's certificate",
                timeout_s=30,
            ).stdout
            key = describe_key(text)
            chain = (
                f"the server's own certificate (openssl: {seen.verify or 'not verified'}); "
                f"openssl s_client negotiated {seen.protocol or '?'} {seen.cipher or '?'}"
            )
        except EncbenchError as exc:
            key, chain = "not read", f"openssl s_client could not show it: {exc}"
        self.record["pki"][TARGET_KEY] = {"server_key": key, "chain": chain}

    def _close(self) -> None:
        if self.created and not self.target_spec.keep:
            self.progress.log(f"pg-in-transit: dropping {self.database}")
            # One the server no longer takes is recorded for `encbench clean --target`.
            leftovers.drop_or_record(
                self.target_spec, self.database, self.marker, self.store.path,
                lambda: self.target.drop_owned(self.database, self.marker),
            )  # fmt: skip
        self.created = False

    def _answering(self) -> Alive:
        return self.target

    # -- a cell ------------------------------------------------------------------------------
    def route(
        self, cell: TransitCell, variant: str, at: tuple[str, int] | None = None
    ) -> dict[str, str]:
        """The login over TCP to the target (its own host and port: `at` is the sandbox's):
        the plain side with sslmode=disable, the TLS side with the cell's sslmode and only
        its protocol version."""
        if variant == "plain":
            return self.target.env(self.database, Route("disable"))
        root = self.target_spec.ssl_ca if cell.sslmode == "verify-full" else ""
        return self.target.env(self.database, Route(cell.sslmode, cell.tls_version, root))

    @contextlib.contextmanager
    def open_cell(self, cell: TransitCell) -> Iterator[dict[str, dict[str, str]]]:
        assert self.facts is not None, "a cell is opened inside setup()"
        why = skip_reason(cell, self.target_spec, self.facts.tls_versions())
        if why is not None:
            self.record["skipped"][cell.slug] = why
            self.book.save()
            # The target's certificate, versions and route stay what they are on --resume.
            raise CellSkipped(why, final=True)
        self.record["skipped"].pop(cell.slug, None)
        routes = {variant: self.route(cell, variant) for variant in ("plain", "encrypted")}
        found = {}
        for variant, env in routes.items():
            log = self.store.raw_path(f"pg-in-transit-{cell.slug}-proof-{variant}.txt")
            found[variant] = proof.prove_session(cell, variant, sessions.session(env, log))
        self.record["proofs"][cell.slug] = found
        self.book.save()
        self.routes = routes
        try:
            yield routes
        finally:
            self.routes = {}

    # -- one run -----------------------------------------------------------------------------
    def clocks(self, start: Clocks | None = None) -> Clocks:
        # The server's processes are not on this host: its CPU is not read.
        return Clocks.read(0, start.pids if start else None, server_cpu_s=lambda: 0.0)

    def _sessions_after(self, before: int, expected: int) -> int:
        """The run's connections: the sessions counted since `before`, waiting briefly for
        backends still exiting to count theirs."""
        deadline = time.monotonic() + SESSIONS_WAIT_S
        while True:
            made = self.target.sessions(self.database) - before
            if made >= expected or time.monotonic() > deadline:
                return made
            time.sleep(0.2)

    def before_run(self, run: Run) -> int:
        """Where the run's connections begin to count: the sessions of encbench's database."""
        return self.target.sessions(self.database)

    def after_run(self, run: Run, got: ClientRun, before: int) -> RunProof:
        """The sessions the run made (a target's log is not encbench's to read); its TLS as
        libpq was told to make it, the server accepting only that version."""
        cell = run.cell
        made = self._sessions_after(before, got.events if cell.connects else cell.threads)
        if run.variant == "plain":
            return RunProof(tls_handshakes=0, connections=made)
        words = f"{cell.tls_version} (libpq: sslmode={cell.sslmode}, only this version)"
        return RunProof(tls_handshakes=made, connections=made, negotiated=words)

    def reads_server_cpu(self) -> bool:
        return False  # the target's host is not this one


def postgresql_side(context: SideContext) -> Side:
    """PostgreSQL's side against the profile's target, or with its own sandbox."""
    if context.profile.target is not None:
        return PgTransitTarget(context)
    return PgTransit(context)


def plan_lines(profile: Profile) -> list[str]:
    """`encbench plan`: the study's part against a target, read only."""
    assert profile.target is not None
    spec = profile.target
    with pg_target.login(spec) as target:
        accepted = pg_readiness.read_facts(target).tls_versions()
    db = f"encbench_{PLACEHOLDER_KEY}_pgtransit"
    out = [
        f'  CREATE DATABASE "{db}"; COMMENT ON DATABASE "{db}" IS \'encbench run …\' '
        "(as the login: no role is created), then pgbench -i and the tests' tables in it",
        "  the server's certificate: openssl s_client -starttls postgres (its key recorded); "
        "its TLS settings as pg_settings shows them",
    ]
    for c in postgresql_cells(profile):
        why = skip_reason(c, spec, accepted)
        out.append(f"  cell {c.label}: " + (f"skipped — {why}" if why else "measured"))
    if not spec.keep:
        out.append(f'  at the end: DROP DATABASE "{db}" (its marker read again first)')
    return out
