"""The PostgreSQL in-transit study: one sandboxed PostgreSQL that accepts both plain and TLS
connections from the benchmark role; per cell, paired rounds of the same pgbench with
sslmode=disable and with the cell's sslmode.

Lifecycle: [two hosts, when a cell asks for a distance: the server in one network
namespace, the clients of distance cells in the other, across an emulated link; the
loopback cells' clients beside the server] → provision (initdb, the benchmark role with a
generated password, pgbench's tables) → per server TLS configuration (key type, protocol
version): a restart with that certificate → per cell: the link's delay (and the delay relay
where the kernel has no netem) → prove both routes (pg_stat_ssl of one connection each,
with the client's link captured) → warm-up → paired rounds until the interval is tight
enough or the budget ends.  Every run is proven again from the server's own log of its
connections.

One server for both variants, on purpose, as in the MariaDB in-transit study: the only
difference between the two runs of a round is the connection's TLS.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.study import Run
from encbench.engine.study_base import Given, load_fields
from encbench.errors import ToolError
from encbench.net import distance, netns
from encbench.net.distance import Hosts
from encbench.proof import link_capture
from encbench.results.pgbench_run import pgbench_fields
from encbench.servers import keys, pki
from encbench.servers.postgresql import sandbox as pg_sandbox
from encbench.servers.postgresql.sandbox import PgSandbox
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.servers.target import Alive, blame_the_server
from encbench.studies.in_transit.postgresql import cells as pg_cells
from encbench.studies.in_transit.postgresql import copy_stream, pgbench, proof
from encbench.studies.in_transit.postgresql.options import PgTransitSpec
from encbench.studies.in_transit.postgresql.records import PgTransitCell, PgTransitRecord
from encbench.studies.in_transit.study_record import TransitBasics

ROLE = "encbench_bench"
# A run's connections, those of them with TLS, and what they negotiated ("" for none).
Connections = tuple[int, int, str]
DATABASE = "encbench"


class PgTransitStudy(TransitBasics):
    record_type = PgTransitRecord
    rule: PgTransitSpec

    def __init__(self, given: Given) -> None:
        super().__init__(given)
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
    def setup(self, todo: Sequence[PgTransitCell]) -> Iterator[PgSandbox]:
        with contextlib.ExitStack() as stack:
            # From every cell, not only those left: a resumed run keeps the same topology, so
            # its loopback rows run on the same host (namespace) as before.
            rtts = [c.rtt_ms for c in self.cells()]
            self.hosts = distance.open_hosts(
                stack, rtts, None, self.progress.log, PgTransitRecord.STUDY
            )
            if self.hosts.link is not None:
                link = self.hosts.link
                self.record["link"] = {
                    "id": link.id,
                    "client": link.client_addr,
                    "server": link.server_addr,
                }
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
            [
                pg_sandbox.program("pgbench"),
                "-i",
                "-q",
                "-s",
                str(self.rule.scale),
                "-U",
                ROLE,
                "-d",
                DATABASE,
            ],
            phase="pgbench -i",
            timeout_s=600,
            stdout_path=self.store.path / "logs" / "pgbench-init.log",
            env=server.admin_env(),
        )
        self.select1.write_text(pgbench.SELECT1_SCRIPT)
        if "copy" in tests:
            self.progress.log(f"pg-in-transit: a table of about {self.rule.copy_mb} MiB to copy")
            server.execute(*copy_stream.create_sql(self.rule.copy_mb, ROLE), database=DATABASE)
            stream = server.query(copy_stream.STREAM_BYTES_SQL, database=DATABASE)[0][0]
            self.record["bulk_table"] = {
                "rows": copy_stream.rows_for(self.rule.copy_mb),
                "bytes": int(stream),
            }
        self.record["postgresql_version"] = server.version()
        self.record["scale"] = self.rule.scale
        self.record["server_user"] = server.user.name
        self._save_record()
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
        self, cell: PgTransitCell, variant: str, at: tuple[str, int] | None = None
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
    def open_cell(self, cell: PgTransitCell) -> Iterator[dict[str, dict[str, str]]]:
        """The server's TLS set for the cell's group (a restart when it changes), the cell's
        distance set (the link's delay, a delay relay), and both routes proven with one
        connection each, the client's link captured meanwhile."""
        server = self._server()
        if cell.rtt_ms > 0 and self.hosts.link is None:
            raise self._skip(cell, self.hosts.unavailable or "no emulated link")
        group = pg_cells.server_tls(cell)
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
                    raise self._skip(cell, str(exc)) from exc
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

    def _prove_routes(self, cell: PgTransitCell, routes: dict[str, dict[str, str]]) -> None:
        """One connection per route asks the server about itself, its link captured."""
        psql = pg_sandbox.program("psql")
        found: dict[str, str] = {}
        wire: dict[str, str] = {}
        for variant, env in routes.items():
            log = self.store.raw_path(f"pg-in-transit-{cell.slug}-proof-{variant}.txt")
            # One suffix of its own: the capture's files are named by replacing it.
            base = self.store.raw_path(f"pg-in-transit-{cell.slug}-{variant}.wire")
            marker = f"encbench-wire-{secrets.token_hex(8)}"
            place = self._captured_link(cell)
            if place is None:
                seen = proof.session(psql, env, log, marker, self.client_prefix)
                wire[variant] = "not captured: capturing a link needs root (AF_PACKET)"
            else:
                namespace, device = place
                what = f"the {variant} route's link ({device})"
                with link_capture.captured(
                    namespace, device, marker, base, what, port=self._server().port
                ) as capture:
                    seen = proof.session(psql, env, log, marker, self.client_prefix)
                wire[variant] = proof.judge_wire(cell, variant, capture.findings)
            found[variant] = proof.prove_session(cell, variant, seen)
        self.record["proofs"][cell.slug] = found
        self.record["wire"][cell.slug] = wire
        self.record["skipped"].pop(cell.slug, None)  # skipped before, measured now
        self._save_record()

    def _captured_link(self, cell: PgTransitCell) -> tuple[str, str] | None:
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
    def _client(
        self, cell: PgTransitCell, variant: str, seconds: int, raw: Path
    ) -> pgbench.PgbenchResult:
        """One run of the cell's client: pgbench, or psql copying the bulk table."""
        with blame_the_server(self._answering()):
            if cell.test == "copy":
                return copy_stream.run(
                    pg_sandbox.program("psql"),
                    seconds,
                    self.routes[variant],
                    raw,
                    int(self.record["bulk_table"]["bytes"]),
                    self.client_prefix,
                )
            return pgbench.run(
                pg_sandbox.program("pgbench"),
                cell,
                seconds,
                self.select1,
                self.routes[variant],
                raw,
                self.client_prefix,
            )

    def _answering(self) -> Alive:
        """The server that answers the clients: the sandbox, or the user's."""
        return self._server()

    def warm_up(self, cell: PgTransitCell, variant: str, seconds: int, raw: Path) -> None:
        self._client(cell, variant, seconds, raw)

    def _clocks(self, start: Clocks | None = None) -> Clocks:
        server = self._server()
        return Clocks.read(
            server.pid, start.pids if start else None, server_cpu_s=server.cpu_seconds
        )

    def _before_run(self) -> int:
        """Where the run's connections begin to count: the server log's size."""
        return self._server().log_size()

    def _connections(self, run: Run, got: pgbench.PgbenchResult, before: int) -> Connections:
        """The run's connections, those with TLS, and what they negotiated: the server's own
        log of each connection of the benchmark role since `before`."""
        seen = proof.logged_connections(self._server().log_since(before), ROLE)
        return seen.connections, seen.tls, seen.words()

    def _server_cpu_s(self, window: Window) -> float | None:
        """The server's CPU over the run (None: not read)."""
        return window.server_cpu_s

    def measure(self, run: Run) -> PgTransitRecord:
        cell, variant, raw = run.cell, run.variant, run.raw
        before = self._before_run()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        start = self._clocks()
        got = self._client(cell, variant, run.seconds, raw)
        window = Window.between(start, self._clocks(start))
        connections, tls_connections, negotiated = self._connections(run, got, before)
        server_cpu_s = self._server_cpu_s(window)
        return PgTransitRecord(
            **run.record_fields(started_at, window.wall_s),
            **pgbench_fields(got),
            connection_ms=got.connection_ms,
            server_cpu_s=server_cpu_s or 0.0,
            client_cpu_s=window.client_cpu_s,
            **load_fields(window),
            connections=connections,
            tls_connections=tls_connections,
            negotiated=negotiated,
            raw_output=str(raw.relative_to(self.store.path)),
            usage=window.usage(server_cpu_s),
        )

    def prove(self, record: PgTransitRecord) -> None:
        proof.check_run(record)
