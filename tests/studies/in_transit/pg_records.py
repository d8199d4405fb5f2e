"""PostgreSQL's in-transit cells and runs as the tests make them: a cell of the study's one
cell type (records.TransitCell) of kind postgresql, and a run record as PostgreSQL's side
writes it (pgbench's tps, transactions and failed as its rate, events and errors; the
server's log of its TLS connections as its handshakes)."""

from __future__ import annotations

from encbench.studies.in_transit.records import TransitCell, TransitRecord


def pg_cell(
    test: str, sslmode: str, key_type: str, tls_version: str, clients: int, rtt_ms: float = 0.0
) -> TransitCell:
    return TransitCell(
        test, "tls", key_type, "", rtt_ms, clients,
        kind="postgresql", sslmode=sslmode, tls_version=tls_version,
    )  # fmt: skip


def run_record(
    cell: TransitCell,
    variant: str,
    round_: int = 0,
    tps: float = 400.0,
    **fields: object,
) -> TransitRecord:
    """A run of 1.05 s at `tps` whose every transaction made its connection, one more for
    the client's first; `fields` by the record's names."""
    tls = variant == "encrypted"
    transactions = max(1, round(tps))
    values: dict[str, object] = {
        "cell": cell,
        "round": round_,
        "variant": variant,
        "position": 0 if (round_ % 2 == 0) == (variant == "plain") else 1,
        "session": "s",
        "started_at": "2026-11-26T01:00:00+00:00",
        "wall_s": 1.05,
        "rate": tps,
        "events": transactions,
        "bytes": 0,
        "errors": 0,
        "latency_avg_ms": 1000 / tps,
        "latency_p95_ms": None,
        "connection_ms": 2.0,
        "server_cpu_s": 0.4,
        "tunnel_cpu_s": 0.0,
        "client_cpu_s": 0.3,
        "harness_cpu_s": 0.01,
        "other_cpu_s": 0.0,
        "steal_s": 0.0,
        "connections": transactions + 1,
        "tls_handshakes": transactions + 1 if tls else 0,
        "tunnel_handshakes": 0,
        "tunnel_resumed": 0,
        "session_cache_hits": 0,
        "negotiated": f"{cell.tls_version} TLS_AES_256_GCM_SHA384 256 bits" if tls else "",
        "raw_output": "raw/x.txt",
    }
    values.update(fields)
    return TransitRecord(**values)  # type: ignore[arg-type]
