"""The in-transit study's records of measured runs and the metrics it compares.

in-transit.jsonl, schema TRANSIT_SCHEMA:
  1 — first version (then transit.jsonl).
  2 — `rate_unit` names the unit of `rate`; bulk and dump rates are MiB/s (2^20 bytes), which
      version 1 called "MB/s".  Later, with default 0: `interference_pct`; `other_cpu_s` now
      leaves out every process of the run (tunnels, relays, the server), not only the tunnel.
      Later: `server_cpu_s` null where the server's CPU could not be read (a target without
      [target] ssh); older lines, all numbers, read as before.  Later still, PostgreSQL's
      runs beside MariaDB's: the cell's `kind`, `sslmode` and `tls_version` (written only for
      a kind other than MariaDB), the run's `connections`, `negotiated` and `connection_ms`
      (None or "" in MariaDB's runs, whose proof is the server's counters); and
      `latency_p95_ms` null where the client does not give one (pgbench).

pg-in-transit.jsonl (schema 1), where results directories kept PostgreSQL's runs before they
were this study's records: read as these records (EARLIER: from_pg_transit).
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.schema import Earlier, Metric, RecordedRun, record

TRANSIT_SCHEMA = 2
MARIADB = "mariadb"

TRANSIT_METRICS = (
    Metric("rate", "per s (rate_unit)", "higher_is_better", primary=True, cannot_improve=True),
)


@record
class TransitCell:
    """One row of the in-transit tables: a test through one method (native TLS with a key type
    and cipher, stunnel, or an SSH tunnel with a cipher) at one distance and thread count.
    Its two variants are `plain` (plain TCP to the same server) and `encrypted`."""

    test: str  # connect | oltp_point_select | oltp_read_only | bulk | dump (PostgreSQL's below)
    method: str  # tls | stunnel | ssh
    key_type: str  # the TLS chain's key type, or the SSH host key type
    cipher: str  # TLS 1.2 suite or SSH cipher; "" = the default
    rtt_ms: float
    threads: int  # client threads (PostgreSQL: pgbench's clients)
    resume: bool = False  # stunnel: TLS session resumption allowed (its client's default)
    # The kind of server (servers/server_kind.py); PostgreSQL's cells also name the TLS
    # side's libpq sslmode and the one protocol version its server accepts (MariaDB's is the
    # study's tls_version).  PostgreSQL's tests: connect_select1, connect_select_only (a new
    # connection per transaction, pgbench -C), select_only, copy (psql's COPY … TO STDOUT).
    kind: str = MARIADB
    sslmode: str = ""
    tls_version: str = ""

    @property
    def label(self) -> str:
        if self.kind != MARIADB:
            path = (self.test, self.sslmode, self.key_type, self.tls_version)
            far = f" RTT {self.rtt_ms:g} ms" if self.rtt_ms else ""
            return f"{' '.join(p for p in path if p)}{far} {self.threads} cl"
        cipher = f" {self.cipher}" if self.cipher else ""
        cipher += " resumed" if self.resume else ""
        distance = f" rtt {self.rtt_ms:g} ms" if self.rtt_ms else ""
        return f"{self.test} {self.method} {self.key_type}{cipher}{distance} {self.threads} thr"

    @property
    def slug(self) -> str:
        if self.kind != MARIADB:
            # As PostgreSQL's cells were named before they were this study's (--resume, the
            # raw files' names); a loopback cell as before distances existed.
            far = f"-rtt{self.rtt_ms:g}" if self.rtt_ms else ""
            return (
                f"{self.test}-{self.sslmode}-{self.key_type}-{self.tls_version.lower()}{far}"
                f"-c{self.threads}"
            )
        cipher = self.cipher.replace("@", "_").replace("/", "_") or "default"
        cipher += "-resume" if self.resume else ""
        return (
            f"{self.test}-{self.method}-{self.key_type}-{cipher}-rtt{self.rtt_ms:g}-t{self.threads}"
        )

    @property
    def unit(self) -> str:
        units = {
            "connect": "conn/s",
            "connect_first": "conn/s",
            "bulk": "MiB/s",
            "dump": "MiB/s",
            "copy": "copies/s",
        }
        return units.get(self.test, "txn/s")

    @property
    def connects(self) -> bool:
        """Whether every event opens a connection of its own (a TLS handshake each)."""
        return self.test.startswith("connect") or self.test == "copy"

    def to_json(self) -> dict[str, Any]:
        """MariaDB's cells as they were written before other kinds' were."""
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if self.kind == MARIADB:
            for name in ("kind", "sslmode", "tls_version"):
                data.pop(name)
        return data


def from_pg_transit(line: dict[str, Any]) -> dict[str, Any]:
    """A line of pg-in-transit.jsonl (schema 1) as this study's: its cell a PostgreSQL cell,
    pgbench's tps, transactions and failed its rate, events and errors, the server's log of
    TLS connections its handshakes (a PostgreSQL server resumes no TLS session, and no
    tunnel was measured)."""
    cell = line["cell"]
    test = cell["test"]
    return {
        **{k: v for k, v in line.items() if k not in ("cell", "tps", "transactions", "failed")},
        "schema": TRANSIT_SCHEMA,
        "cell": {
            "test": test,
            "method": "tls",
            "key_type": cell["key_type"],
            "cipher": "",
            "rtt_ms": cell.get("rtt_ms", 0.0),
            "threads": cell["clients"],
            "kind": "postgresql",
            "sslmode": cell["sslmode"],
            "tls_version": cell["tls_version"],
        },
        "rate": line["tps"],
        "events": line["transactions"],
        "bytes": 0,
        "errors": line["failed"],
        "latency_p95_ms": None,
        "tunnel_cpu_s": 0.0,
        # A target's CPU was not read (written then as 0).
        "server_cpu_s": None if cell["key_type"] == "target" else line["server_cpu_s"],
        "tls_handshakes": line["tls_connections"],
        "tunnel_handshakes": 0,
        "tunnel_resumed": 0,
        "session_cache_hits": 0,
        "rate_unit": "copies/s" if test == "copy" else "txn/s",
    }


@record
class TransitRecord(RecordedRun):
    """One measured run of one variant in one round of an in-transit cell."""

    STUDY: ClassVar[str] = "in-transit"
    SCHEMA: ClassVar[int] = TRANSIT_SCHEMA
    CELL: ClassVar[type[Any]] = TransitCell
    EARLIER: ClassVar[tuple[Earlier, ...]] = (Earlier("pg-in-transit", 1, from_pg_transit),)
    FIGURES: ClassVar[tuple[str, ...]] = ("server_cpu_ms_per_event",)
    METRICS: ClassVar[tuple[Metric, ...]] = TRANSIT_METRICS

    cell: TransitCell
    # round … wall_s: RecordedRun's; then this study's own
    rate: float  # per second, in rate_unit: connections, transactions or MiB (2^20 bytes)
    events: int  # connections, transactions, or result sets/dumps read
    bytes: int  # bytes read by the client (bulk, dump); 0 otherwise
    errors: int
    latency_avg_ms: float
    latency_p95_ms: float | None  # None: the client does not give one (pgbench)
    # None: not measured (a target whose process is not on this host and not reachable over
    # ssh; in-transit.json's cpu_measurement says why).
    server_cpu_s: float | None
    tunnel_cpu_s: float  # stunnel (both ends) or ssh + sshd with its session children
    client_cpu_s: float
    # The per-run proof: the server's Ssl_finished_accepts delta (MariaDB, MySQL); the TLS
    # connections its log shows (PostgreSQL; a target's: the sessions libpq made with TLS).
    tls_handshakes: int
    # stunnel: handshakes its server side logged; ssh: channels its client's -v log opened
    tunnel_handshakes: int
    tunnel_resumed: int  # stunnel handshakes that resumed an earlier session
    session_cache_hits: int  # the server's Ssl_session_cache_hits delta: resumed TLS
    raw_output: str
    rate_unit: str = ""  # conn/s, txn/s, MiB/s or copies/s: the cell's unit, in the record
    # A server whose proof is its log of each connection (PostgreSQL's): the run's
    # connections, and what TLS they negotiated ("" none); its client's mean time to
    # connect (pgbench's "average connection time", -C, or its initial one; 0 for a copy).
    connections: int | None = None
    negotiated: str = ""
    connection_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["cell"] = self.cell.to_json()
        if self.cell.kind == MARIADB:  # as MariaDB's runs were written before
            for name in ("connections", "negotiated", "connection_ms"):
                data.pop(name)
        return data

    def __post_init__(self) -> None:
        if not self.rate_unit:
            object.__setattr__(self, "rate_unit", self.cell.unit)
        self.refuse_empty(self.events, self.rate, "events")

    @property
    def server_cpu_ms_per_event(self) -> float | None:
        if self.server_cpu_s is None:
            return None
        return 1000.0 * self.server_cpu_s / self.events

    @property
    def encryption_cpu_ms_per_event(self) -> float | None:
        """Server plus tunnel CPU per event: where the encryption work lands on the server
        side, whichever method does it (None when the server's CPU was not measured)."""
        if self.server_cpu_s is None:
            return None
        return 1000.0 * (self.server_cpu_s + self.tunnel_cpu_s) / self.events
