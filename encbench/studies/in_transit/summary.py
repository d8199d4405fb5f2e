"""The in-transit part of summary.json, built from the study's runs alone (in-transit.jsonl,
and pg-in-transit.jsonl where an earlier encbench wrote PostgreSQL's there) and its record
file (in-transit.json: PKI, server TLS settings, proofs; each kind's part): every kind's
cells in one list, each kind's server in its own fields."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from encbench import stats
from encbench.engine import stopping_rule
from encbench.engine.study import Rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.models import Record, Spread
from encbench.report.study_summary import identity, recorded, study_fields
from encbench.results.schema import Metric, primary_metric
from encbench.studies.definition import cells_of, rule_of
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.in_transit import kind
from encbench.studies.in_transit.models import (
    InTransitSummary,
    PerEvent,
    PgServer,
    Rate,
    TransitCellSummary,
    TransitVariant,
)
from encbench.studies.in_transit.options import pg_transit_options, transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord

# Beside the study's own METRICS (the rate): compared too, when both sides are above zero.
EXTRA_METRICS = (
    Metric("latency_avg_ms", "ms", "lower_is_better", cannot_improve=True),
    Metric("encryption_cpu_ms_per_event", "ms", "lower_is_better", cannot_improve=True),
)

# The metric whose interval decides when a cell stops (as the runner decides it).
PRIMARY = primary_metric(TransitRecord.METRICS).name


def _spread(records: Iterable[TransitRecord], attr: str) -> Spread:
    return Spread.of([float(getattr(r, attr)) for r in records])


def _rate(records: list[TransitRecord]) -> Rate:
    """One variant's mean rate with its 95% CI (t interval over rounds), as the seed's table
    gives a mean with its spread."""
    mean, stdev = stats.mean_and_stdev([r.rate for r in records])
    return Rate(mean=mean, stdev=stdev, ci95=stats.mean_ci(mean, stdev, len(records)))


def _server_cpu(runs: list[TransitRecord], events: int) -> PerEvent:
    """The server's CPU per event over all runs; total_s None when it was not measured (a
    target's), which the section says in words rather than as a zero."""
    measured = [r.server_cpu_s for r in runs if r.server_cpu_s is not None]
    if len(measured) < len(runs):
        return PerEvent(mean=0.0, total_s=None)
    return PerEvent(mean=1000 * sum(measured) / events, total_s=sum(measured))


def variant_stats(runs: list[TransitRecord]) -> TransitVariant:
    events = sum(r.events for r in runs)
    cpu = [r.encryption_cpu_ms_per_event for r in runs]
    return TransitVariant(
        rate=_rate(runs),
        latency_avg_ms=_spread(runs, "latency_avg_ms"),
        server_cpu_ms_per_event=_server_cpu(runs, events),
        tunnel_cpu_ms_per_event=PerEvent(mean=1000 * sum(r.tunnel_cpu_s for r in runs) / events),
        encryption_cpu_ms_per_event=(
            None if None in cpu else Spread.of([c for c in cpu if c is not None])
        ),
        tls_handshakes=sum(r.tls_handshakes for r in runs),
        tunnel_handshakes=sum(r.tunnel_handshakes for r in runs),
        tunnel_resumed=sum(r.tunnel_resumed for r in runs),
        session_cache_hits=sum(r.session_cache_hits for r in runs),
        events=events,
        errors=sum(r.errors for r in runs),
        **_logged(runs),
    )


def _logged(runs: list[TransitRecord]) -> dict[str, Any]:
    """The connections a server logged and its client's time to connect, where counted."""
    connections = [r.connections for r in runs if r.connections is not None]
    connecting = [r.connection_ms for r in runs if r.connection_ms is not None]
    return {
        "connections": sum(connections) if len(connections) == len(runs) else None,
        "connection_ms": Spread.of(connecting) if len(connecting) == len(runs) else None,
    }


def summarize_cell(
    cell: TransitCell, state: stopping_rule.CellRounds, rule: Rule, record: Record
) -> TransitCellSummary:
    counted = [run for r in state.counted for run in r.runs.values()]
    book = record if cell.kind == kind.MARIADB else (record.get(cell.kind) or {})
    skipped = (book.get("skipped") or {}).get(cell.slug)
    own = {
        **identity(cell),
        # The unit the records name (schema 2); the cell's own for a run without records yet.
        "unit": counted[0].rate_unit if counted else cell.unit,
        "proof": (book.get("proofs") or {}).get(cell.slug),
        "wire": (book.get("wire") or {}).get(cell.slug),
    }
    summary = cells.summarize_cell(
        TransitCellSummary,
        own,
        state,
        rule.for_cell(cell),
        (*TransitRecord.METRICS, *EXTRA_METRICS),
        variant_stats,
        not_measured=f"not measured: {skipped}" if skipped else "not measured",
    )
    return summary


def build(
    runs: list[TransitRecord], profile: Profile, record: Record | None, cores: int = 1
) -> InTransitSummary:
    record = record or {}
    t = transit_options(profile)
    rule = rule_of(profile, kind.NAME)
    return InTransitSummary(
        **study_fields(
            cells_of(profile, kind.NAME),
            runs,
            rule,
            PRIMARY,
            lambda cell, state: summarize_cell(cell, state, rule, record),
            cores,
        ),
        tls_version=t.tls_version,
        mariadb_version=record.get("mariadb_version"),
        install=record.get("install"),
        server_family=record.get("family"),
        pki=record.get("pki"),
        notes=record.get("notes"),
        server_options=record.get("server_options"),
        delay_method=record.get("delay_method"),
        link=record.get("link"),
        bulk_table=record.get("bulk_table"),
        target=record.get("target"),
        cpu_measurement=record.get("cpu_measurement"),
        session_cache_hits=sum(r.session_cache_hits for r in runs if r.cell.kind == kind.MARIADB),
        tls_handshakes=sum(r.tls_handshakes for r in runs if r.cell.kind == kind.MARIADB),
        postgresql=_postgresql(profile, record),
    )


def _postgresql(profile: Profile, record: Record) -> PgServer | None:
    """PostgreSQL's server as its part of the record has it (None: its cells not asked)."""
    if not transit_cells.postgresql_cells(profile):
        return None
    part = record.get(kind.POSTGRESQL) or {}
    fields = (
        "postgresql_version",
        "server_user",
        "pki",
        "server_settings",
        "bulk_table",
        "delay_method",
        "target",
        "link",
    )
    return PgServer(
        **recorded(part, fields),
        scale=int(part.get("scale", pg_transit_options(profile).scale)),
        skipped=part.get("skipped") or None,
    )
