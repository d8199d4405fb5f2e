"""PostgreSQL's side of the in-transit study (study.py: the Side it runs): one sandboxed
PostgreSQL that accepts both plain and TLS connections from the benchmark role, reached by
pgbench (and psql's COPY) with sslmode=disable and with the cell's sslmode.

Lifecycle: on the study's hosts (at a distance the server in one network namespace, the
clients of distance cells in the other; the loopback cells' clients beside the server) →
provision (initdb, the benchmark role with a generated password, pgbench's tables) → per
server TLS configuration (key type, protocol version): a restart with that certificate →
per cell: the link's delay (and the delay relay where the kernel has no netem) → prove both
routes (pg_stat_ssl of one connection each, with the client's link captured) → the study's
warm-up and paired rounds.  Every run is proven again from the server's own log of its
connections.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.study import Run
from encbench.errors import ToolError
from encbench.net import distance, netns
from encbench.net.distance import Hosts
from encbench.proof import link_capture
from encbench.results.schema import Usage
from encbench.servers import keys, pki
from encbench.servers.postgresql import copy_table, pgbench, sessions
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.servers.target import Alive, blame_the_server
from encbench.studies.in_transit import postgresql_clients as pg_clients
from encbench.studies.in_transit import postgresql_proof as proof
from encbench.studies.in_transit.cells import pg_server_tls
from encbench.studies.in_transit.options import pg_transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.side import ClientRun, RunProof, SideContext

ROLE = "encbench_bench"
DATABASE = "encbench"


class PgTransit:
    """The Side of PostgreSQL's cells (study.py)."""

    def __init__(self, context: SideContext) -> None:
        self.store, self.profile, self.progress = context.store, context.profile, context.progress
        self.book, self.private = context.book, context.private
        self.record = self.book.data
        self.rule = pg_transit_options(self.profile)
        self.password = keys.password(self.private, "pg-bench")
        self.passfile = pg_sandbox.passfile(self.private, "pg-bench", ROLE, self.password)
        self.record.setdefault("wire", {})
        self.hosts = Hosts(None, [], [])
        # The cell's clients: their host (a namespace's exec prefix) and where they dial.
        self.client_prefix: list[str] = []
        self.pkis: dict[str, pki.Pki] = {}
        self.server: PgSandbox | None = None
        self.settings: dict[str, str] = {}  # the server's, less its TLS
        self.tls_group: tuple[str, str] | None = None
        self.routes: dict[str, dict[str, str]] = {}
        self.select1 = self.private / "pg-select1.sql"

    # -- the server ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def setup(self, hosts: Hosts, todo: Sequence[TransitCell]) -> Iterator[PgSandbox]:
        """The server on the study's hosts, provisioned for the cells `todo`."""
        with contextlib.ExitStack() as stack:
            self.hosts = hosts
            self.server = self._provision(stack, {c.test for c in todo})
            try:
                yield self.server
            finally:
                self.server, self.tls_group = None, None
                self.hosts = Hosts(None, [], [])

    def _provision(self, stack: contextlib.ExitStack, tests: set[str]) -> PgSandbox:
        sandbox = self.store.path / "sandbox"
        root = sandbox / "pg-transit"
        clear_stale_sandbox(root)
        server = PgSandbox("pg-transit", root, launch_prefix=self.hosts.local)
        # Last in, first out: the server is destroyed, then its empty parent removed.
        stack.callback(remove_empty_sandbox_dir, self.store)
        stack.callback(server.destroy, keep_log_in=self.store.path / "logs")
        # The server's user passes through the results directory to its data directory.
        for directory in (self.store.path, sandbox):
            directory.mkdir(exist_ok=True)
            pg_sandbox.make_enterable(directory, server.user)
        self.progress.log(
            f"pg-in-transit: provisioning PostgreSQL ({self.rule.shared_buffers_mb} MB "
            f"shared_buffers, running as {server.user.name})"
        )
        link = self.hosts.link
        clients = ["127.0.0.1"] + ([link.client_addr] if link else [])
        server.initialize(
            "\n".join(f"host all {ROLE} {address}/32 scram-sha-256" for address in clients)
        )
        self.settings = pg_sandbox.server_settings(self.rule.shared_buffers_mb)
        if link is not None:
            # Inside its namespace the server has loopback and its end of the link.
            self.settings["listen_addresses"] = f"127.0.0.1,{link.server_addr}"
        server.start(self.settings)
        server.create_role(ROLE, self.password)
        server.execute(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        self.progress.log(f"pg-in-transit: pgbench -i, scale {self.rule.scale}")
        # Over the socket, as the benchmark role (trusted there): its own tables.
        proc.run(
            pgbench.init_argv(self.rule.scale, DATABASE, ROLE),
            phase="pgbench -i",
            timeout_s=600,
            stdout_path=self.store.path / "logs" / "pgbench-init.log",
            env=server.admin_env(),
        )
        self.select1.write_text(pgbench.SELECT1_SCRIPT)
        if "copy" in tests:
            self.progress.log(f"pg-in-transit: a table of about {self.rule.copy_mb} MiB to copy")
            server.execute(*copy_table.create_sql(self.rule.copy_mb, ROLE), database=DATABASE)
            stream = server.query(copy_table.STREAM_BYTES_SQL, database=DATABASE)[0][0]
            self.record["bulk_table"] = {
                "rows": copy_table.rows_for(self.rule.copy_mb),
                "bytes": int(stream),
            }
        self.record["postgresql_version"] = server.version()
        self.record["scale"] = self.rule.scale
        self.record["server_user"] = server.user.name
        self.book.save()
        return server

    def _server(self) -> PgSandbox:
        assert self.server is not None, "a cell is measured inside setup()"
        return self.server

    def _pki(self, key_type: str) -> pki.Pki:
        if key_type not in self.pkis:
            self.progress.log(f"pg-in-transit: generating a {key_type} CA and server certificate")
            made = pki.generate(self.store.path, key_type)
            self.pkis[key_type] = made
            self.record["pki"][key_type] = {
                "server_key": pki.describe(made.server_cert),
                "chain": "private CA and server certificate of the same key type",
            }
        return self.pkis[key_type]

    def _configure(self, server: PgSandbox, key_type: str, tls_version: str) -> None:
        """The server restarted with this key type's certificate, limited to one version."""
        made = self._pki(key_type)
        cert, key = server.install_tls(made)
        settings = {**self.settings, **pg_sandbox.tls_settings(cert, key, tls_version)}
        self.progress.log(f"pg-in-transit: server TLS {tls_version}, {key_type}")
        server.restart(settings)
        shown = server.query(
            "SELECT current_setting('ssl'), current_setting('ssl_min_protocol_version'), "
            "current_setting('ssl_max_protocol_version')"
        )[0]
        if shown != ["on", tls_version, tls_version]:
            raise ToolError(
                f"the server runs with ssl, versions {shown}, not on, {tls_version}",
                phase="configure TLS",
            )
        self.record.setdefault("server_settings", {})[f"{key_type} {tls_version}"] = {
            k: v if not k.endswith("_file") else Path(v).name
            for k, v in settings.items()
            if k.startswith("ssl")
        }

    # -- a cell ----------------------------------------------------------------------------------
    def route(
        self, cell: TransitCell, variant: str, at: tuple[str, int] | None = None
    ) -> dict[str, str]:
        """A client's libpq settings for one side of the cell: the benchmark role over TCP to
        `localhost` at `at` (by default the server's port on 127.0.0.1; verify-full checks the
        name against the certificate), its password from the password file; the plain side
        with sslmode=disable.  A client certificate or root certificate of the user's
        ~/.postgresql is never read."""
        server = self._server()
        address, port = at or ("127.0.0.1", server.port)
        ssl = variant != "plain"
        ca = self._pki(cell.key_type).ca_cert if ssl and cell.sslmode == "verify-full" else None
        return pg_sandbox.clean_env(
            {
                "PGHOST": "localhost",
                "PGHOSTADDR": address,
                "PGPORT": str(port),
                "PGUSER": ROLE,
                "PGDATABASE": DATABASE,
                "PGPASSFILE": str(self.passfile),
                "PGSSLMODE": cell.sslmode if ssl else "disable",
                "PGSSLROOTCERT": str(ca or self.private / "no-root-cert"),
                "PGSSLCERT": str(self.private / "no-client-cert"),
                "PGSSLKEY": str(self.private / "no-client-key"),
                # GSSAPI encryption is tried before TLS where a Kerberos ticket exists.
                "PGGSSENCMODE": "disable",
                "PGCONNECT_TIMEOUT": "10",
            }
        )

    @contextlib.contextmanager
    def open_cell(self, cell: TransitCell) -> Iterator[dict[str, dict[str, str]]]:
        """The server's TLS set for the cell's group (a restart when it changes), the cell's
        distance set (the link's delay, a delay relay), and both routes proven with one
        connection each, the client's link captured meanwhile."""
        server = self._server()
        if cell.rtt_ms > 0 and self.hosts.link is None:
            raise self.book.skip(cell, self.hosts.unavailable or "no emulated link")
        group = pg_server_tls(cell)
        if group != self.tls_group:
            self._configure(server, *group)
            self.tls_group = group
        with contextlib.ExitStack() as stack:
            at: tuple[str, int] | None = None
            self.client_prefix = self.hosts.local
            if cell.rtt_ms > 0:
                try:
                    method, reach = distance.reach_at(
                        stack, self.hosts, self.store.path, cell.rtt_ms
                    )
                except netns.NetnsUnavailable as exc:  # the delay could not be set
                    raise self.book.skip(cell, str(exc)) from exc
                self.record.setdefault("delay_method", {})[f"{cell.rtt_ms:g}"] = method
                at = reach(server.port)
                self.client_prefix = self.hosts.remote
            routes = {v: self.route(cell, v, at) for v in ("plain", "encrypted")}
            self._prove_routes(cell, routes)
            self.routes = routes
            try:
                yield routes
            finally:
                self.routes, self.client_prefix = {}, []

    def _prove_routes(self, cell: TransitCell, routes: dict[str, dict[str, str]]) -> None:
        """One connection per route asks the server about itself, its link captured."""
        found: dict[str, str] = {}
        wire: dict[str, str] = {}
        for variant, env in routes.items():
            log = self.store.raw_path(f"pg-in-transit-{cell.slug}-proof-{variant}.txt")
            # One suffix of its own: the capture's files are named by replacing it.
            base = self.store.raw_path(f"pg-in-transit-{cell.slug}-{variant}.wire")
            marker = f"encbench-wire-{secrets.token_hex(8)}"
            place = self._captured_link(cell)
            if place is None:
                seen = sessions.session(env, log, marker, self.client_prefix)
                wire[variant] = "not captured: capturing a link needs root (AF_PACKET)"
            else:
                namespace, device = place
                what = f"the {variant} route's link ({device})"
                with link_capture.captured(
                    namespace, device, marker, base, what, port=self._server().port
                ) as capture:
                    seen = sessions.session(env, log, marker, self.client_prefix)
                wire[variant] = proof.judge_wire(cell, variant, capture.findings)
            found[variant] = proof.prove_session(cell, variant, seen)
        self.record["proofs"][cell.slug] = found
        self.record["wire"][cell.slug] = wire
        self.record["skipped"].pop(cell.slug, None)  # skipped before, measured now
        self.book.save()

    def _captured_link(self, cell: TransitCell) -> tuple[str, str] | None:
        """(namespace, device) the cell's clients reach the server through: the client's end
        of the link at a distance, else the loopback of the server's host ("": this
        process's own); None where a capture cannot be made (not root).  Either way the
        capture keeps to the server's port, which the relay dials too."""
        link = self.hosts.link
        if os.geteuid() != 0:
            return None
        if cell.rtt_ms > 0 and link is not None:
            return link.client_ns, netns.client_device(link)
        return (link.server_ns if link is not None else ""), "lo"

    # -- one run ---------------------------------------------------------------------------------
    def _client(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> ClientRun:
        """One run of the cell's client: pgbench, or psql copying the bulk table."""
        with blame_the_server(self._answering()):
            if cell.test == "copy":
                got = pg_clients.copy(
                    seconds,
                    self.routes[variant],
                    raw,
                    int(self.record["bulk_table"]["bytes"]),
                    self.client_prefix,
                )
            else:
                got = pg_clients.pgbench(
                    cell,
                    seconds,
                    self.select1,
                    self.routes[variant],
                    raw,
                    self.client_prefix,
                )
        return ClientRun(
            events=got.transactions,
            rate=got.tps,
            bytes=0,
            latency_avg_ms=got.latency_avg_ms,
            latency_p95_ms=None,
            errors=got.failed,
            connection_ms=got.connection_ms,
        )

    def _answering(self) -> Alive:
        """The server that answers the clients: the sandbox, or the user's."""
        return self._server()

    def warm_up(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> None:
        self._client(cell, variant, seconds, raw)

    def clocks(self, start: Clocks | None = None) -> Clocks:
        server = self._server()
        return Clocks.read(
            server.pid, start.pids if start else None, server_cpu_s=server.cpu_seconds
        )

    def before_run(self, run: Run) -> int:
        """Where the run's connections begin to count: the server log's size."""
        return self._server().log_size()

    def run_client(self, run: Run) -> ClientRun:
        return self._client(run.cell, run.variant, run.seconds, run.raw)

    def after_run(self, run: Run, got: ClientRun, before: int) -> RunProof:
        """The run's connections, those with TLS, and what they negotiated: the server's own
        log of each connection of the benchmark role since `before`."""
        seen = sessions.logged_connections(self._server().log_since(before), ROLE)
        return RunProof(
            tls_handshakes=seen.tls, connections=seen.connections, negotiated=seen.words()
        )

    def reads_server_cpu(self) -> bool:
        return True

    def usage(self, cell: TransitCell, window: Window, read_bytes: int) -> Usage:
        return window.usage(window.server_cpu_s if self.reads_server_cpu() else None)

    def prove(self, record: TransitRecord) -> None:
        proof.check_run(record)
