"""sysbench's stock OLTP scripts against one server of the pair, through sysbench's
PostgreSQL driver (`pgsql`): the same workloads (oltp_read_only, oltp_point_select,
oltp_read_write) the MariaDB at-rest study runs through its `mysql` driver, on tables of the
profile's `[data]` size, so that the two servers' costs of encryption at rest can be read
for the same workload, clients and regime.  Over the server's private socket as the
administrator (its pg_hba trusts the socket), in the database pgbench's tables are in."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from encbench.servers.postgresql.sandbox import ADMIN, PgSandbox
from encbench.servers.target import Connection
from encbench.studies.at_rest.postgresql.records import PgAtRestCell
from encbench.workloads import sysbench
from encbench.workloads.pgbench_report import PgbenchResult


def connection(server: PgSandbox, database: str) -> Connection:
    return Connection.postgresql(server.socket_dir, server.port, ADMIN, database)


def prepare(
    server: PgSandbox, database: str, tables: int, table_size: int, log: Path, timeout_s: float
) -> None:
    """The sbtest tables, as the MariaDB study makes them (one seed: the same rows)."""
    sysbench.prepare(
        connection(server, database),
        tables=tables,
        table_size=table_size,
        log=log,
        timeout_s=timeout_s,
        env=server.admin_env(),
    )


def run(
    server: PgSandbox,
    database: str,
    cell: PgAtRestCell,
    tables: int,
    table_size: int,
    seconds: int,
    log: Path,
    env: Mapping[str, str],
) -> PgbenchResult:
    """One sysbench run, in the figures a pgbench run gives (transactions, failed, TPS, mean
    latency): the study's record is the same whichever client ran it."""
    got = sysbench.run(
        sysbench.invocation(
            connection(server, database),
            cell.workload,
            threads=cell.clients,
            time_s=seconds,
            log=log,
            options=sysbench.oltp_options(tables, table_size),
            env=env,
        )
    )
    return PgbenchResult(
        transactions=got.transactions,
        failed=got.ignored_errors,
        tps=got.tps,
        latency_avg_ms=got.latency_avg_ms,
        connection_ms=0.0,
    )
