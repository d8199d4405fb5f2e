"""The PostgreSQL in-transit study: one sandboxed PostgreSQL that accepts both plain and TLS
connections from the benchmark role; per cell, paired rounds of the same pgbench with
sslmode=disable and with the cell's sslmode.

Lifecycle: provision (initdb, the benchmark role with a generated password, pgbench's
tables) → per server TLS configuration (key type, protocol version): a restart with that
certificate → per cell: prove both routes (pg_stat_ssl of one connection each) → warm-up
→ paired rounds until the interval is tight enough or the budget ends.  Every run is proven
again from the server's own log of its connections.

One server for both variants, on purpose, as in the MariaDB in-transit study: the only
difference between the two runs of a round is the connection's TLS.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.progress import RunProgress
from encbench.engine.study import Run
from encbench.errors import ToolError
from encbench.profile import Profile
from encbench.results.schema import Metric
from encbench.results.store import ResultStore
from encbench.servers import keys, pg_sandbox, pki
from encbench.servers.pg_sandbox import PgSandbox
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.studies import machine
from encbench.studies.pg_transit import cells as pg_cells
from encbench.studies.pg_transit import copy_stream, pgbench, proof
from encbench.studies.pg_transit.options import PgTransitSpec, pg_transit_options
from encbench.studies.pg_transit.records import PgTransitCell, PgTransitRecord

ROLE = "encbench_bench"
DATABASE = "encbench"
RECORD_FILE = "pg-in-transit.json"


class PgTransitStudy:
    name = PgTransitRecord.STUDY
    record_type = PgTransitRecord

    def __init__(self, store: ResultStore, profile: Profile, progress: RunProgress) -> None:
        self.store = store
        self.profile = profile
        self.spec = pg_transit_options(profile)
        self.rule: PgTransitSpec = self.spec
        # Both routes meet one server: the rounds stay sequential.
        self.together = False
        self.progress = progress
        self.private = keys.private_dir(store.path)
        self.password = keys.password(self.private, "pg-bench")
        self.passfile = pg_sandbox.passfile(self.private, "pg-bench", ROLE, self.password)
        self.record: dict[str, Any] = store.read_json(RECORD_FILE) or {"proofs": {}, "pki": {}}
        self.pkis: dict[str, pki.Pki] = {}
        self.server: PgSandbox | None = None
        self.settings: dict[str, str] = {}  # the server's, less its TLS
        self.tls_group: tuple[str, str] | None = None
        self.routes: dict[str, dict[str, str]] = {}
        self.select1 = self.private / "pg-select1.sql"

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return PgTransitRecord.METRICS

    def cells(self) -> Sequence[PgTransitCell]:
        return pg_cells.cells(self.profile)

    def prepare(self) -> None:
        machine.record_environment(self.store)

    # -- the server ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def setup(self, todo: Sequence[PgTransitCell]) -> Iterator[PgSandbox]:
        with contextlib.ExitStack() as stack:
            self.server = self._provision(stack, {c.test for c in todo})
            try:
                yield self.server
            finally:
                self.server, self.tls_group = None, None

    def _provision(self, stack: contextlib.ExitStack, tests: set[str]) -> PgSandbox:
        sandbox = self.store.path / "sandbox"
        root = sandbox / "pg-transit"
        clear_stale_sandbox(root)
        server = PgSandbox("pg-transit", root)
        # Last in, first out: the server is destroyed, then its empty parent removed.
        stack.callback(remove_empty_sandbox_dir, self.store)
        stack.callback(server.destroy, keep_log_in=self.store.path / "logs")
        # The server's user passes through the results directory to its data directory.
        for directory in (self.store.path, sandbox):
            directory.mkdir(exist_ok=True)
            pg_sandbox.make_enterable(directory, server.user)
        self.progress.log(
            f"pg-in-transit: provisioning PostgreSQL ({self.spec.shared_buffers_mb} MB "
            f"shared_buffers, running as {server.user.name})"
        )
        server.initialize(f"host all {ROLE} 127.0.0.1/32 scram-sha-256")
        self.settings = pg_sandbox.server_settings(self.spec.shared_buffers_mb)
        server.start(self.settings)
        server.create_role(ROLE, self.password)
        server.script(f"CREATE DATABASE {DATABASE} OWNER {ROLE};\n")
        self.progress.log(f"pg-in-transit: pgbench -i, scale {self.spec.scale}")
        # Over the socket, as the benchmark role (trusted there): its own tables.
        proc.run(
            [
                pg_sandbox.program("pgbench"),
                "-i",
                "-q",
                "-s",
                str(self.spec.scale),
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
            self.progress.log(f"pg-in-transit: a table of about {self.spec.copy_mb} MiB to copy")
            server.script(copy_stream.create_sql(self.spec.copy_mb, ROLE), database=DATABASE)
            stream = server.query(copy_stream.STREAM_BYTES_SQL, database=DATABASE)[0][0]
            self.record["bulk_table"] = {
                "rows": copy_stream.rows_for(self.spec.copy_mb),
                "bytes": int(stream),
            }
        self.record["postgresql_version"] = server.version()
        self.record["scale"] = self.spec.scale
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
    def route(self, cell: PgTransitCell, variant: str) -> dict[str, str]:
        """A client's libpq settings for one side of the cell: the benchmark role over TCP to
        `localhost` at 127.0.0.1 (verify-full checks the name against the certificate), its
        password from the password file; the plain side with sslmode=disable.  A client
        certificate or root certificate of the user's ~/.postgresql is never read."""
        server = self._server()
        ssl = variant != "plain"
        ca = self._pki(cell.key_type).ca_cert if ssl and cell.sslmode == "verify-full" else None
        return pg_sandbox.clean_env(
            {
                "PGHOST": "localhost",
                "PGHOSTADDR": "127.0.0.1",
                "PGPORT": str(server.port),
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
        """The server's TLS set for the cell's group (a restart when it changes), and both
        routes proven with one connection each."""
        server = self._server()
        group = pg_cells.server_tls(cell)
        if group != self.tls_group:
            self._configure(server, *group)
            self.tls_group = group
        routes = {variant: self.route(cell, variant) for variant in ("plain", "encrypted")}
        psql = pg_sandbox.program("psql")
        found = {}
        for variant, env in routes.items():
            log = self.store.raw_path(f"pg-in-transit-{cell.slug}-proof-{variant}.txt")
            found[variant] = proof.prove_session(cell, variant, proof.session(psql, env, log))
        self.record["proofs"][cell.slug] = found
        self._save_record()
        self.routes = routes
        try:
            yield routes
        finally:
            self.routes = {}

    def _save_record(self) -> None:
        self.store.write_json(RECORD_FILE, self.record)

    # -- one run ---------------------------------------------------------------------------------
    def _client(
        self, cell: PgTransitCell, variant: str, seconds: int, raw: Path
    ) -> pgbench.PgbenchResult:
        """One run of the cell's client: pgbench, or psql copying the bulk table."""
        try:
            if cell.test == "copy":
                return copy_stream.run(
                    pg_sandbox.program("psql"),
                    seconds,
                    self.routes[variant],
                    raw,
                    int(self.record["bulk_table"]["bytes"]),
                )
            return pgbench.run(
                pg_sandbox.program("pgbench"),
                cell,
                seconds,
                self.select1,
                self.routes[variant],
                raw,
            )
        except ToolError:
            self._check_alive()
            raise
        except ValueError as exc:
            raise ToolError(
                f"{cell.label}, {variant} run: {exc}", phase="pgbench", tail=proc.tail(raw)
            ) from exc

    def _check_alive(self) -> None:
        """Raise the server's failure, if a client's was the server's."""
        self._server().check_alive()

    def warm_up(self, cell: PgTransitCell, variant: str, seconds: int, raw: Path) -> None:
        self._client(cell, variant, seconds, raw)

    def _clocks(self, start: Clocks | None = None) -> Clocks:
        server = self._server()
        return Clocks.read(
            server.pid, start.pids if start else None, server_cpu_s=server.cpu_seconds
        )

    def measure(self, run: Run) -> PgTransitRecord:
        cell, variant, raw = run.cell, run.variant, run.raw
        server = self._server()
        offset = server.log_size()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        start = self._clocks()
        got = self._client(cell, variant, run.seconds, raw)
        window = Window.between(start, self._clocks(start))
        seen = proof.logged_connections(server.log_since(offset), ROLE)
        return PgTransitRecord(
            cell=cell,
            round=run.round,
            variant=variant,
            position=run.position,
            session=run.session,
            started_at=started_at,
            wall_s=window.wall_s,
            tps=got.tps,
            transactions=got.transactions,
            failed=got.failed,
            latency_avg_ms=got.latency_avg_ms,
            connection_ms=got.connection_ms,
            server_cpu_s=window.server_cpu_s,
            client_cpu_s=window.client_cpu_s,
            harness_cpu_s=window.harness_cpu_s,
            other_cpu_s=window.other_cpu_s,
            steal_s=window.steal_s,
            interference_pct=window.interference_pct,
            connections=seen.connections,
            tls_connections=seen.tls,
            negotiated=seen.words(),
            raw_output=str(raw.relative_to(self.store.path)),
            usage=window.usage(window.server_cpu_s),
        )

    def prove(self, record: PgTransitRecord) -> None:
        proof.check_run(record)
