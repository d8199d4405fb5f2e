"""What a PostgreSQL server says of its connections: of one connection, asked over it
(`pg_stat_ssl` joined with `pg_stat_activity` for its own backend: TLS or not, the protocol,
the cipher and its bits); of every connection, in its log (`log_connections`: "connection
authorized: user=… SSL enabled (protocol=…, cipher=…, bits=…)")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import ProofError
from encbench.servers.postgresql.sandbox import program

SESSION_SQL = (
    "SELECT s.ssl, coalesce(s.version, ''), coalesce(s.cipher, ''), coalesce(s.bits, 0) "
    "FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid "
    "WHERE s.pid = pg_backend_pid() AND a.usename = current_user"
)
_AUTHORIZED = re.compile(r"connection authorized: user=(\S+)(.*)$", re.M)
_SSL = re.compile(r"SSL enabled \(protocol=([^,]+), cipher=([^,]+), bits=(\d+)\)")


@dataclass(frozen=True)
class Session:
    """The server's view of one connection."""

    ssl: bool
    version: str
    cipher: str
    bits: int

    def words(self) -> str:
        return f"{self.version} {self.cipher} {self.bits} bits" if self.ssl else "plain"


def parse_session(output: str) -> Session:
    rows = [line.split("\t") for line in output.splitlines() if line.strip()]
    if len(rows) != 1 or len(rows[0]) != 4:
        raise ProofError(f"pg_stat_ssl gave no row for the connection itself: {output[:200]!r}")
    ssl, version, cipher, bits = rows[0]
    return Session(ssl == "t", version, cipher, int(bits or 0))


def session_sql(marker: str = "") -> str:
    """The proof's query; with a marker (for the capture of the wire) in a comment that psql
    sends as it is (-c sends its string whole) and the server ignores."""
    return f"/* {marker} */ {SESSION_SQL}" if marker else SESSION_SQL


def session(
    env: Mapping[str, str], log: Path, marker: str = "", prefix: Sequence[str] = ()
) -> Session:
    """One connection over a route (psql with the route's libpq settings `env`, the
    measured clients' own libpq, on the client's host: `prefix`), asked about itself; its
    output is kept in `log`."""
    sql = session_sql(marker)
    out = proc.run(
        [
            *prefix,
            program("psql"),
            "-X",
            "-q",
            "-A",
            "-t",
            "-F",
            "\t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ],
        phase="prove the route (pg_stat_ssl)",
        timeout_s=60,
        stdout_path=log,
        env=env,
        hint=f"its output is in {log}",
    )
    return parse_session(out.stdout)


@dataclass(frozen=True)
class Logged:
    """The benchmark role's connections in a stretch of the server's log."""

    connections: int
    tls: int
    negotiated: Counter[str]

    def words(self) -> str:
        return "; ".join(sorted(self.negotiated))


def logged_connections(log_text: str, role: str) -> Logged:
    """Every "connection authorized" line of `role` in `log_text`, and the TLS of each."""
    total, tls = 0, 0
    negotiated: Counter[str] = Counter()
    for user, rest in _AUTHORIZED.findall(log_text):
        if user != role:
            continue
        total += 1
        found = _SSL.search(rest)
        if found is not None:
            tls += 1
            negotiated[f"{found[1]} {found[2]} {found[3]} bits"] += 1
    return Logged(total, tls, negotiated)
