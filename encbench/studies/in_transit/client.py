"""The client of an in-transit cell, run once over one route: sysbench with connect.lua,
a stock OLTP script or bulk.lua, or mariadb-dump; and the one connection per route that the
cell's proof asks the server about, made by the same client library."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from encbench.servers import pki
from encbench.servers.mariadb import tls
from encbench.studies.in_transit.records import TransitCell
from encbench.studies.in_transit.routes import Route
from encbench.studies.in_transit.side import ClientRun
from encbench.workloads import bulk, connrate

# At a distance each query waits a round trip (oltp_read_only's transaction about 16): a
# run of the per-query tests lasts at least this many, or a 1 s run at 170 ms would hold a
# transaction or none.
QUERY_ROUND_TRIPS = 50
# MySQL's first logins (connect_first): the users each connection of a run logs in as, one
# each, named FIRST_LOGIN_USER0, 1, …  A run that uses them all ends there (its rate is
# still over its own window); 2,000 last a run of about 4.5 s at the fastest rate measured
# (MySQL 9.7 on a 2-core VM: 431 full logins a second over plain TCP, 187 over TLS), so
# options.problem refuses a run_s beyond options.FIRST_LOGIN_RUN_S.
FIRST_LOGIN_USER = "encbench_first"
FIRST_LOGIN_USERS = 2000


def query_run_s(rtt_ms: float) -> int:
    """The shortest run of a per-query test at this round-trip time (0 on loopback)."""
    return math.ceil(QUERY_ROUND_TRIPS * rtt_ms / 1000)


@dataclass(frozen=True)
class Client:
    """The password user's client, with the PKI of the server's current configuration
    (its client certificate and CA in `workdir`, where sysbench reads them)."""

    password: str
    pki: pki.Pki
    workdir: Path
    database: str
    table_size: int  # rows of the sysbench table (per-query tests)
    table_bytes: int  # payload of the bulk table (bulk)
    connloop: Path | None = None  # the C client of first logins (connect_first)

    def run(self, cell: TransitCell, route: Route, log: Path, time_s: int) -> ClientRun:
        if cell.test == "connect_first":
            return self._first_logins(cell, route, log, time_s)
        if cell.test == "dump":
            got = bulk.dump(
                route.target,
                database=self.database,
                pki=self.pki if route.ssl else None,
                password=self.password,
                workdir=self.workdir,
                log=log,
                timeout_s=600,
                prefix=route.prefix,
            )
            mib = max(1, round(got.bytes / bulk.MIB))
            ms = 1000 * got.seconds
            return ClientRun(mib, got.mb_per_s, got.bytes, ms, ms, 0)
        extra: list[str] = []
        script = str(connrate.LUA_SCRIPT)
        if cell.test == "bulk":
            script = str(bulk.LUA_SCRIPT)
            # Whole reads only: a few per run, so give each run at least two seconds.
            time_s = max(time_s, 2)
        elif cell.test != "connect":
            script = cell.test
            extra = ["--tables=1", f"--table-size={self.table_size}", "--rand-type=uniform"]
            time_s = max(time_s, query_run_s(cell.rtt_ms))
        result = connrate.run_tcp(
            route.target,
            ssl=route.ssl,
            threads=cell.threads,
            time_s=time_s,
            workdir=self.workdir,
            password=self.password,
            log=log,
            script=script,
            extra=extra,
            prefix=route.prefix,
        )
        if cell.test == "bulk":
            # Events are whole reads of the table; counted in MiB so that CPU per event is
            # CPU per MiB, comparable with the dump's.
            nbytes = result.transactions * self.table_bytes
            events = max(1, round(nbytes / bulk.MIB))
            rate = result.tps * self.table_bytes / bulk.MIB
        else:
            nbytes, events, rate = 0, result.transactions, result.tps
        return ClientRun(
            events,
            rate,
            nbytes,
            result.latency_avg_ms,
            result.latency_p95_ms,
            result.ignored_errors,
        )

    def _first_logins(self, cell: TransitCell, route: Route, log: Path, time_s: int) -> ClientRun:
        """connloop, each connection a user of its own (the cache was emptied before it)."""
        assert self.connloop is not None, "first logins need connloop, built at provisioning"
        got = connrate.measure_connloop(
            self.connloop,
            dataclasses.replace(route.target, user=FIRST_LOGIN_USER),
            ssl=route.ssl,
            threads=cell.threads,
            time_s=time_s,
            workdir=self.workdir,
            password=self.password,
            log=log,
            users=FIRST_LOGIN_USERS,
            prefix=route.prefix,
        )
        # connloop times no connection on its own: each thread's mean time per connection.
        ms = 1000 * got.seconds * cell.threads / max(1, got.connections)
        return ClientRun(got.connections, got.per_s, 0, ms, ms, got.errors)

    def session(self, cell: TransitCell, route: Route, log: Path) -> tls.SessionTls:
        """The server's view of one connection made by the cell's own client's library
        (sysbench for connect, per-query and bulk, and for first logins, whose connloop
        links the same libmariadb; the mariadb client for dump).  One per route and cell:
        every other connection is proven by the server's handshake counter."""
        if cell.test == "dump":
            t = route.target
            return tls.client_session(
                t.host,
                t.port,
                t.user,
                self.password,
                self.pki if route.ssl else None,
                self.workdir,
                prefix=route.prefix,
            )
        return connrate.sysbench_session(
            route.target,
            ssl=route.ssl,
            workdir=self.workdir,
            password=self.password,
            log=log,
            prefix=route.prefix,
        )
