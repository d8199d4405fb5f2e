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
from encbench.servers.postgresql.sysbench import socket_connection
from encbench.servers.target import Connection
from encbench.studies.at_rest.records import CellKey
from encbench.workloads import sysbench


def connection(server: PgSandbox, database: str) -> Connection:
    return socket_connection(server.socket_dir, server.port, ADMIN, database)


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
    cell: CellKey,
    tables: int,
    table_size: int,
    seconds: int,
    log: Path,
    env: Mapping[str, str],
) -> sysbench.SysbenchResult:
    """One sysbench run (its figures as the MariaDB study reads them)."""
    return sysbench.run(
        sysbench.invocation(
            connection(server, database),
            cell.workload,
            threads=cell.threads,
            time_s=seconds,
            log=log,
            options=sysbench.oltp_options(tables, table_size),
            env=env,
        )
    )
