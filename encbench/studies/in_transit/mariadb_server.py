"""MariaDB's and MySQL's side of the in-transit study (study.py: the Side it runs): one
sandboxed server that accepts both plain and TLS connections, or the user's (`--target`).

Lifecycle: provision (server, user, sysbench table, bulk table) → per server TLS
configuration (key type, cipher): restart → per cell: open its routes (tunnel, delay relay)
→ prove both routes → the study's warm-up and paired rounds → close the routes.  Every run
is proven again from the server's own counters: a plain run made no TLS handshake, a TLS
run made at least one per connection, a tunnel run went through the tunnel's own
handshakes.

One server for both variants, on purpose: the server is identical by construction, and the
only difference between the two runs of a round is the path the client takes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from encbench import proc
from encbench.engine.clocks import Clocks, Window
from encbench.engine.study import Run
from encbench.net import netns
from encbench.results.schema import Usage
from encbench.servers import keys, pki
from encbench.servers.mariadb import installs, tls
from encbench.servers.mariadb.options import server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.remote_cpu import cpu_measurement
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.servers.target import Connection, Target, blame_the_server
from encbench.servers.variants import CALIBRATION_SIDES, EncryptionSpec
from encbench.studies.in_transit import cells as transit_plan
from encbench.studies.in_transit.checks import check_run, prove_routes
from encbench.studies.in_transit.client import FIRST_LOGIN_USER, FIRST_LOGIN_USERS, Client
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.routes import USER, Hosts, Route, RouteMaker
from encbench.studies.in_transit.side import ClientRun, RunProof, SideContext
from encbench.studies.in_transit.sizing import pool_mb
from encbench.studies.in_transit.target import TransitTarget
from encbench.workloads import bulk, connrate, sysbench


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@dataclasses.dataclass(frozen=True)
class _Before:
    """The counters read just before a run's window."""

    tls: tls.TlsCounters
    tunnel_sessions: int
    tunnel_resumed: int
    tunnel_cpu_s: float


class MariaDbTransit:
    """The Side of MariaDB's and MySQL's cells (study.py)."""

    def __init__(self, context: SideContext) -> None:
        self.store, self.profile, self.progress = context.store, context.profile, context.progress
        self.book, self.private = context.book, context.private
        self.record = self.book.data
        self.rule = transit_options(self.profile)
        # Against a user's server ([target]) its own account and password; else a user of
        # the sandbox with a generated one.
        self.target = (
            TransitTarget(self.store, self.profile) if self.profile.target is not None else None
        )
        self.password = (
            (self.target.server.password or "")
            if self.target is not None
            else keys.password(self.private, "transit-client")
        )
        if self.profile.calibration:
            # A/A: the `encrypted` role is a twin of the plain path (routes.py).
            self.record |= {
                "calibration": True,
                "sides": dict(CALIBRATION_SIDES),
                "paths": {"plain": "plain TCP", "encrypted": "plain TCP (twin)"},
            }
        self.pkis: dict[str, pki.Pki] = {}
        self.user_openssl_conf = os.environ.get("OPENSSL_CONF")
        self.server: SandboxServer | None = None
        self.hosts = Hosts(None, [], [])
        self.tls_group: tuple[str, str] | None = None
        self.routes: dict[str, Route] = {}
        self.connloop: Path | None = None

    @contextlib.contextmanager
    def setup(self, hosts: Hosts, todo: Sequence[TransitCell]) -> Iterator[Target]:
        """The server of the kind's cells on the study's hosts, provisioned for `todo`."""
        if self.target is not None:
            with self._target_setup(self.target, todo) as server:
                yield server
            return
        with contextlib.ExitStack() as stack:
            stack.callback(_restore_env, "OPENSSL_CONF", self.user_openssl_conf)
            self.hosts = hosts
            self.server = self._provision(stack, self.hosts, list(todo))
            try:
                yield self.server
            finally:
                self.server, self.tls_group = None, None

    @contextlib.contextmanager
    def _target_setup(self, target: TransitTarget, todo: Sequence[TransitCell]) -> Iterator[Target]:
        """The user's server: checked, encbench's database made on it (dropped on any exit
        unless keep), its certificate fetched and described (target.py)."""
        with contextlib.ExitStack() as stack:
            self.record["target"] = target.check()
            stack.callback(target.close)
            # Before anything is created: an ssh that fails stops the run with nothing made.
            target.open_cpu(self.progress.log)
            self.record["cpu_measurement"] = cpu_measurement(target.cpu, target.spec.ssh)
            tests = {c.test for c in todo}
            table = target.provision(
                tests, self.rule.table_size, self.rule.bulk_mb, self.progress.log
            )
            if table is not None:
                self.record["bulk_table"] = {"rows": table.rows, "bytes": table.payload_bytes}
            self.table_bytes = table.payload_bytes if table is not None else 0
            self.record["mariadb_version"] = self.record["target"]["version"]
            if target.tls_missing is None:
                self.current_pki = target.prepare_tls(self.record)
                pki.sysbench_dir(self.current_pki, self._workdir(self.current_pki.key_type))
            self.book.save()
            try:
                yield target.server
            finally:
                self.tls_group = None

    def _answering(self) -> Target:
        """The server that answers for both paths: the sandbox, or the user's."""
        if self.target is not None:
            return self.target.server
        return self._server()

    def _target_routes(self, cell: TransitCell) -> dict[str, Route]:
        assert self.target is not None
        why = transit_plan.target_skip_reason(cell) or self.target.tls_missing
        if why is not None:
            # What the user's server is (one key type, no TLS) stays so on --resume.
            raise self.book.skip(cell, why, final=True)
        where = self.target.connection()
        return {"plain": Route(where, ssl=False), "encrypted": Route(where, ssl=True)}

    @contextlib.contextmanager
    def open_cell(self, cell: TransitCell) -> Iterator[dict[str, Route]]:
        """The server's TLS set for the cell's group (a restart when it changes), the cell's
        routes opened, and both proven with one connection each.  Against a user's server
        nothing is set: its TLS is what it is, and a cell that needs more is skipped."""
        if self.target is not None:
            with self._proven(cell, self._target_routes(cell), tls_version="") as routes:
                yield routes
            return
        server = self._server()
        if cell.rtt_ms > 0 and self.hosts.link is None:
            raise self.book.skip(cell, self.hosts.unavailable)
        refused = transit_plan.sandbox_skip_reason(cell, self.profile)
        if refused is not None:
            raise self.book.skip(cell, refused, final=True)
        group = transit_plan.server_tls(cell, self.rule)
        if server.install.mysql and tls.mysql_refuses(group[1]):
            # A tunnel's row needs only some TLS configuration of the server: its default.
            group = (group[0], "")
        if group != self.tls_group:
            self._configure(server, self.hosts, *group)
            self.tls_group = group
        with contextlib.ExitStack() as stack:
            try:
                routes = stack.enter_context(self._route_maker(server).routes(cell))
            except netns.NetnsUnavailable as exc:  # the delay could not be set
                raise self.book.skip(cell, str(exc)) from exc
            with self._proven(cell, routes, self.rule.tls_version) as proven:
                yield proven

    @contextlib.contextmanager
    def _proven(
        self, cell: TransitCell, routes: dict[str, Route], tls_version: str
    ) -> Iterator[dict[str, Route]]:
        """Both routes proven with one connection each (tls_version "": whatever the server
        negotiates, recorded), then held for the cell's rounds."""
        self.routes = routes
        try:
            sessions = {
                variant: self._client().session(
                    cell, route, self.store.raw_path(f"in-transit-{cell.slug}-proof-{variant}.txt")
                )
                for variant, route in self.routes.items()
            }
            self.record["proofs"][cell.slug] = prove_routes(
                cell, self.routes, sessions, tls_version
            )
            self.book.save()
            yield self.routes
        finally:
            self.routes = {}

    def _server(self) -> SandboxServer:
        assert self.server is not None, "a cell is measured inside setup()"
        return self.server

    def _route_maker(self, server: SandboxServer) -> RouteMaker:
        return RouteMaker(
            self.store.path,
            self.hosts,
            server.port,
            server.database,
            self.rule.tls_version,
            lambda key_type: self._pki(key_type, self.hosts),
            self.record,
            calibration=self.profile.calibration,
        )

    def _client(self) -> Client:
        """The client of the server's current TLS configuration."""
        return Client(
            self.password,
            self.current_pki,
            self._workdir(self.current_pki.key_type),
            self._answering().database,
            self.rule.table_size,
            self.table_bytes,
            self.connloop,
        )

    # -- hosts and the server --------------------------------------------------------------
    def _server_options(self, server: SandboxServer, hosts: Hosts, bp_mb: int) -> dict[str, str]:
        options = server_options(
            "plain",
            EncryptionSpec(),
            server.paths,
            port=server.port,
            buffer_pool_mb=bp_mb,
            key_file=keys.key_file(self.private),
            run_as_root=os.geteuid() == 0,
        )
        if hosts.link is not None:
            # Inside its namespace the server has only loopback and the veth end.
            options["bind-address"] = "0.0.0.0"
        return options

    def _provision(
        self, stack: contextlib.ExitStack, hosts: Hosts, todo: list[TransitCell]
    ) -> SandboxServer:
        root = self.store.path / "sandbox" / "transit"
        clear_stale_sandbox(root)
        server = SandboxServer(
            "transit",
            root,
            launch_prefix=hosts.local,
            install=installs.of(self.profile.server.install),
        )
        # Last in, first out: the server is destroyed, then its empty parent removed.
        stack.callback(remove_empty_sandbox_dir, self.store)
        stack.callback(server.destroy, keep_log_in=self.store.path / "logs")
        tests = {c.test for c in todo}
        self.buffer_pool_mb = pool_mb(self.profile, tests)
        self.progress.log(f"in-transit: provisioning the server ({self.buffer_pool_mb} MB pool)")
        options = self._server_options(server, hosts, self.buffer_pool_mb)
        server.initialize(options)
        server.start(options)
        self.server_options = options
        server.query(f"CREATE DATABASE IF NOT EXISTS {server.database}")
        clients = ["127.0.0.1"] + ([hosts.link.client_addr] if hosts.link else [])
        account = Connection.tcp("127.0.0.1", server.port, USER, server.database)
        connrate.create_user(server, account, self.password, tuple(clients))
        if "connect_first" in tests:
            self.progress.log(f"in-transit: {FIRST_LOGIN_USERS:,} users for first logins")
            connrate.create_first_login_users(
                server, FIRST_LOGIN_USER, FIRST_LOGIN_USERS, self.password, tuple(clients)
            )
            self.connloop = connrate.build_connloop(self.private)
        if tests & set(transit_plan.QUERY_TESTS):
            self.progress.log(f"in-transit: loading 1 × {self.rule.table_size:,} rows")
            sysbench.prepare(
                server.endpoint(),
                tables=1,
                table_size=self.rule.table_size,
                log=self.store.path / "logs" / "prepare-transit.log",
            )
        if tests & {"bulk", "dump"}:
            self.progress.log(f"in-transit: creating a {self.rule.bulk_mb} MB table to stream")
            table = bulk.create_table(server, server.database, self.rule.bulk_mb)
            self.record["bulk_table"] = {"rows": table.rows, "bytes": table.payload_bytes}
        self.table_bytes = int((self.record.get("bulk_table") or {}).get("bytes", 0))
        self.record["mariadb_version"] = server.version()
        if (install := server.install.record()) is not None:
            self.record["install"] = install
            self.record["family"] = server.install.family
        self.book.save()
        return server

    def _pki(self, key_type: str, hosts: Hosts) -> pki.Pki:
        if key_type not in self.pkis:
            ips = ("127.0.0.1",) + ((hosts.link.server_addr,) if hosts.link else ())
            self.progress.log(f"in-transit: generating a {key_type} CA, server and client cert")
            made = pki.generate(self.store.path, key_type, server_ips=ips)
            self.pkis[key_type] = made
            self.record["pki"][key_type] = {
                "server_key": pki.describe(made.server_cert),
                "chain": "private CA, server and client certificates of the same key type",
            }
        return self.pkis[key_type]

    def _workdir(self, key_type: str) -> Path:
        return self.private / f"client-{key_type}"

    def _configure(self, server: SandboxServer, hosts: Hosts, key_type: str, cipher: str) -> None:
        # The user's own OpenSSL settings, not the last group's, while making this group's PKI.
        _restore_env("OPENSSL_CONF", self.user_openssl_conf)
        made = self._pki(key_type, hosts)
        pki.sysbench_dir(made, self._workdir(key_type))
        options = dict(self.server_options)
        options |= tls.server_options(
            made,
            tls_version=self.rule.tls_version,
            cipher=cipher or None,
            mysql=server.install.mysql,
        )
        self.progress.log(
            f"in-transit: server TLS {self.rule.tls_version}, {key_type} "
            f"{'cipher ' + cipher if cipher else 'default cipher'}"
        )
        # Every child inherits the harness's environment (proc.child_env): setting it here
        # gives the server, the tunnels and all clients of this group the same settings.
        weak = pki.openssl_env(made)
        os.environ.update(weak)
        if weak:
            self.record.setdefault("notes", {})[key_type] = (
                "OpenSSL security level lowered to 1 for this key type and the tunnel rows "
                "run in its group (Debian's default, level 2, refuses RSA keys under 2048 bits)"
            )
        server.restart(options)
        row = tls.server_tls(server, mysql=server.install.mysql)
        tls.check_server_tls(row, self.rule.tls_version, cipher or None)
        self.record.setdefault("server_options", {})[f"{key_type} {cipher}".strip()] = keys.redact(
            {k: v for k, v in options.items() if k.startswith(("ssl", "tls", "bind"))}
        )
        self.current_pki = made

    # -- one run ---------------------------------------------------------------------------
    def warm_up(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> None:
        self._empty_login_cache(cell)
        with blame_the_server(self._answering()):
            self._client().run(cell, self.routes[variant], raw, seconds)

    def _empty_login_cache(self, cell: TransitCell) -> None:
        """First logins: caching_sha2_password's cache emptied, so that each of the run's
        users logs in in full (outside the window: the statement is not a login's cost)."""
        if cell.test == "connect_first":
            self._answering().query("FLUSH PRIVILEGES")

    def before_run(self, run: Run) -> _Before:
        """The server's TLS counters and the tunnel's sessions and CPU, outside the window
        (first logins: the authentication cache emptied first)."""
        route = self.routes[run.variant]
        self._empty_login_cache(run.cell)
        pids = route.tunnel.pids if route.tunnel else []
        return _Before(
            tls=tls.counters(self._answering().global_status()),
            tunnel_sessions=route.tunnel.sessions()[0] if route.tunnel else 0,
            tunnel_resumed=route.tunnel.resumed() if route.tunnel else 0,
            tunnel_cpu_s=proc.tree_cpu_seconds(pids) if pids else 0.0,
        )

    def run_client(self, run: Run) -> ClientRun:
        with blame_the_server(self._answering()):
            return self._client().run(run.cell, self.routes[run.variant], run.raw, run.seconds)

    def after_run(self, run: Run, got: ClientRun, before: _Before) -> RunProof:
        """The tunnel's CPU over the window (read first: it closes the window's tunnel side),
        then the server's TLS counters and the tunnel's sessions since `before`."""
        route = self.routes[run.variant]
        pids = route.tunnel.pids if route.tunnel else []
        tunnel_cpu = proc.tree_cpu_seconds(pids) - before.tunnel_cpu_s if pids else 0.0
        after = tls.counters(self._answering().global_status()).minus(before.tls)
        tunnel = route.tunnel
        return RunProof(
            tls_handshakes=after.finished_accepts,
            session_cache_hits=after.session_cache_hits,
            tunnel_cpu_s=tunnel_cpu,
            tunnel_handshakes=(tunnel.sessions()[0] - before.tunnel_sessions) if tunnel else 0,
            tunnel_resumed=(tunnel.resumed() - before.tunnel_resumed) if tunnel else 0,
        )

    def usage(self, cell: TransitCell, window: Window, read_bytes: int) -> Usage:
        """The window's usage and, where the cell crossed the rate-limited link (a distance
        row) and moved bulk data, the link's: what the client read against the tbf rate."""
        usage = window.usage(window.server_cpu_s if self.reads_server_cpu() else None)
        if not (cell.rtt_ms and self.rule.rate_mbit and read_bytes):
            return usage
        return dataclasses.replace(
            usage,
            link_mib_s=read_bytes / window.wall_s / 2**20,
            link_capacity_mib_s=self.rule.rate_mbit * 1e6 / 8 / 2**20,
        )

    def clocks(self, start: Clocks | None = None) -> Clocks:
        """The window's clocks; the server's CPU only where its process is on this host."""
        pids = start.pids if start is not None else None
        pid = self._answering().pid
        if pid is None:
            remote = self.target.cpu if self.target is not None else None
            return Clocks.read(0, pids, server_cpu_s=remote.read_s if remote else lambda: 0.0)
        return Clocks.read(pid, pids)

    def reads_server_cpu(self) -> bool:
        """On this host (a sandbox), or on the user's server's host over ssh."""
        if self.target is not None:
            return self.target.cpu is not None
        return True

    def prove(self, record: TransitRecord) -> None:
        check_run(record, calibration=self.profile.calibration, shared=self.target is not None)
