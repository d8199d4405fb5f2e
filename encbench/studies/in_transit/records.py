"""The in-transit study's records of measured runs and the metrics it compares.

in-transit.jsonl, schema TRANSIT_SCHEMA:
  1 — first version (then transit.jsonl).
  2 — `rate_unit` names the unit of `rate`; bulk and dump rates are MiB/s (2^20 bytes), which
      version 1 called "MB/s".  Later, with default 0: `interference_pct`; `other_cpu_s` now
      leaves out every process of the run (tunnels, relays, the server), not only the tunnel.
      Later: `server_cpu_s` null where the server's CPU could not be read (a target without
      [target] ssh); older lines, all numbers, read as before.
"""

from __future__ import annotations

from typing import Any, ClassVar

from encbench.results.schema import Metric, RecordedRun, record

TRANSIT_SCHEMA = 2

TRANSIT_METRICS = (
    Metric("rate", "per s (rate_unit)", "higher_is_better", primary=True, cannot_improve=True),
)


@record
class TransitCell:
    """One row of the in-transit tables: a test through one method (native TLS with a key type
    and cipher, stunnel, or an SSH tunnel with a cipher) at one distance and thread count.
    Its two variants are `plain` (plain TCP to the same server) and `encrypted`."""

    test: str  # connect | oltp_point_select | oltp_read_only | bulk | dump
    method: str  # tls | stunnel | ssh
    key_type: str  # the TLS chain's key type, or the SSH host key type
    cipher: str  # TLS 1.2 suite or SSH cipher; "" = the default
    rtt_ms: float
    threads: int
    resume: bool = False  # stunnel: TLS session resumption allowed (its client's default)

    @property
    def label(self) -> str:
        cipher = f" {self.cipher}" if self.cipher else ""
        cipher += " resumed" if self.resume else ""
        distance = f" rtt {self.rtt_ms:g} ms" if self.rtt_ms else ""
        return f"{self.test} {self.method} {self.key_type}{cipher}{distance} {self.threads} thr"

    @property
    def slug(self) -> str:
        cipher = self.cipher.replace("@", "_").replace("/", "_") or "default"
        cipher += "-resume" if self.resume else ""
        return (
            f"{self.test}-{self.method}-{self.key_type}-{cipher}-rtt{self.rtt_ms:g}-t{self.threads}"
        )

    @property
    def unit(self) -> str:
        units = {"connect": "conn/s", "connect_first": "conn/s", "bulk": "MiB/s", "dump": "MiB/s"}
        return units.get(self.test, "txn/s")


@record
class TransitRecord(RecordedRun):
    """One measured run of one variant in one round of an in-transit cell."""

    STUDY: ClassVar[str] = "in-transit"
    SCHEMA: ClassVar[int] = TRANSIT_SCHEMA
    CELL: ClassVar[type[Any]] = TransitCell
    FIGURES: ClassVar[tuple[str, ...]] = ("server_cpu_ms_per_event",)
    METRICS: ClassVar[tuple[Metric, ...]] = TRANSIT_METRICS

    cell: TransitCell
    # round … wall_s: RecordedRun's; then this study's own
    rate: float  # per second, in rate_unit: connections, transactions or MiB (2^20 bytes)
    events: int  # connections, transactions, or result sets/dumps read
    bytes: int  # bytes read by the client (bulk, dump); 0 otherwise
    errors: int
    latency_avg_ms: float
    latency_p95_ms: float
    # None: not measured (a target whose process is not on this host and not reachable over
    # ssh; in-transit.json's cpu_measurement says why).
    server_cpu_s: float | None
    tunnel_cpu_s: float  # stunnel (both ends) or ssh + sshd with its session children
    client_cpu_s: float
    tls_handshakes: int  # the server's Ssl_finished_accepts delta: the per-run proof
    # stunnel: handshakes its server side logged; ssh: channels its client's -v log opened
    tunnel_handshakes: int
    tunnel_resumed: int  # stunnel handshakes that resumed an earlier session
    session_cache_hits: int  # the server's Ssl_session_cache_hits delta: resumed TLS
    raw_output: str
    rate_unit: str = ""  # conn/s, txn/s or MiB/s: the cell's unit, named in the record

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
