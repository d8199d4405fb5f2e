"""The at-rest part of summary.json: every cell's paired estimates and verdicts, of every
kind in one list, built from at-rest.jsonl alone (and pg-at-rest.jsonl where an earlier
encbench wrote PostgreSQL's there; plus the profile and the records of servers, environment
and cipher speed), so that `encbench report DIR` re-renders exactly what the run wrote."""

from __future__ import annotations

from typing import Any

from encbench.engine import stopping_rule
from encbench.profiles.profile import Profile
from encbench.report import cells
from encbench.report.models import Record, Spread
from encbench.report.study_summary import recorded, study_fields
from encbench.results.schema import primary_metric
from encbench.servers import server_kind
from encbench.servers.mariadb import installs
from encbench.studies.at_rest import cost_profile, floor, growth, target_regimes
from encbench.studies.at_rest.cells import configuration
from encbench.studies.at_rest.models import (
    AtRestCell,
    AtRestSummary,
    AtRestVariant,
    DiskReadsNotMeasured,
    PgServers,
)
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.postgresql_options import KIND as POSTGRESQL
from encbench.studies.at_rest.postgresql_options import pg_at_rest_options
from encbench.studies.at_rest.records import MARIADB, MIB, CellKey, RunRecord
from encbench.studies.definition import cells_of, rule_of

# Shown per variant beside the compared metrics: what the regime did to the buffer pool.
EVIDENCE = (
    "hit_ratio",
    "pages_read_per_txn",
    "pages_written_per_txn",
    "page_cache_mb",
    "kernel_cpu_s",
    "checkpoint_s",
)
WRITE_STATE_NOTE = (
    "Both variants start from the same data (sysbench prepare with one fixed start of its "
    "random numbers, so both load the same rows). Write "
    "workloads are not reset between rounds; instead sysbench's write transactions keep the "
    "row count and row width constant (DELETE+INSERT of the same id, UPDATEs of fixed-width "
    "columns), so both variants keep the same data size, and interleaved rounds expose both "
    "to the same drift over time."
)

# The metric whose interval decides when a cell stops (as the runner decides it).
PRIMARY = primary_metric(RunRecord.METRICS).name


def measured(runs: list[RunRecord], name: str) -> bool:
    """Whether every run has this figure (a target's runs have no server CPU)."""
    return all(getattr(r, name) is not None for r in runs)


def variant_stats(runs: list[RunRecord]) -> AtRestVariant:
    names = (*(m.name for m in RunRecord.METRICS), *EVIDENCE)
    spreads: dict[str, Any] = {
        name: Spread.of([float(getattr(r, name)) for r in runs])
        for name in names
        if measured(runs, name)
    }
    return AtRestVariant(
        **spreads,
        **stall_fields(runs),
        **memory_group_fields(runs),
        errors=sum(r.ignored_errors for r in runs),
        reconnects=sum(r.reconnects for r in runs),
    )


def memory_group_fields(runs: list[RunRecord]) -> dict[str, Any]:
    """Where the kind's runs recorded their data's size and their group's limit (PostgreSQL):
    the largest share of the data its page cache held, and the limit."""
    shares = [r.cache_share_of_data for r in runs]
    limits = [r.memory_limit_bytes for r in runs]
    if None in shares or None in limits:
        return {}
    return {
        "cache_share_of_data": max(s for s in shares if s is not None),
        "memory_limit_mib": max(b for b in limits if b is not None) / MIB,
    }


def steady_fields(rounds: list[stopping_rule.Round]) -> dict[str, Any]:
    """A cell's per-second series (each variant's, its counted rounds in order) and whether
    its write path had leveled off, where its runs kept them (the steady write design)."""
    runs = [run for r in rounds for run in r.runs.values()]
    if not any(run.tps_per_s for run in runs):
        return {}
    series = {v: [x for r in rounds for x in r.runs[v].tps_per_s] for v in stopping_rule.VARIANTS}
    levels = [run.leveled for run in runs if run.leveled is not None]
    return {"series": series, "leveled": all(levels) if levels else None}


# A run whose slowest transaction took this long stalled: the report shows and explains it.
STALL_MS = 1000.0


def stall_fields(runs: list[RunRecord]) -> dict[str, Any]:
    """The worst latency and the stalled runs with what they waited for, where the runs kept
    their series (the steady design: the report shows the maximum beside p95 and p99)."""
    if not measured(runs, "latency_p99_ms"):
        return {}
    stalled = [r for r in runs if (r.latency_max_ms or 0.0) >= STALL_MS]
    waits: dict[str, int] = {}
    for r in stalled:
        for name, count in {**r.waits, "Innodb_buffer_pool_wait_free": r.bp_wait_free}.items():
            waits[name] = waits.get(name, 0) + count
    return {
        "latency_worst_ms": max(r.latency_max_ms or 0.0 for r in runs),
        "stalled_runs": len(stalled),
        "stall_waits": {k: v for k, v in waits.items() if v},
    }


def summarize_cell(
    cell: CellKey,
    state: stopping_rule.CellRounds,
    profile: Profile,
    crypto: Record | None,
    cores: int,
    cpu_profile: Record | None = None,
    skipped: str | None = None,
    counts_pages: bool = True,
) -> AtRestCell:
    identity: dict[str, Any] = {
        "workload": cell.workload,
        "regime": cell.regime,
        "threads": cell.threads,
        "algorithm": cell.algorithm,
        "scope": cell.scope,
        "shape": cell.shape,
        "layer": cell.layer,
        "against": cell.against,
        "kind": cell.kind,
    }
    rounds = state.counted
    if not rounds:
        # At rest, a cell whose only rounds were measured again counts as unmeasured: no
        # rounds, no time.
        return AtRestCell(
            **identity,
            rounds=0,
            measured_s=0.0,
            status=f"not measured: {skipped}" if skipped else "not measured",
        )
    summary = cells.summarize_cell(
        AtRestCell,
        identity,
        state,
        rule_of(profile, RunRecord.STUDY).for_cell(cell),
        RunRecord.METRICS,
        variant_stats,
        cores=cores,
        load_field="other_load_pct",
    )
    if cell.kind != MARIADB:
        return summary  # InnoDB's cipher floor and CPU profile are MariaDB's alone
    spec = configuration(cell, profile)
    return summary.model_copy(
        update={
            **steady_fields(rounds),
            # InnoDB's cipher: none under the filesystem layer alone (the kernel's is not it),
            # and none against scope tables (both sides run it; the pages are not the logs').
            "floor": floor.cipher_floor(
                [r.runs["encrypted"] for r in rounds],
                [r.runs["plain"] for r in rounds],
                crypto,
                spec.algorithm,
            )
            if spec.tde and spec.control is None and counts_pages
            else None,
            # Per cipher page: not against scope tables, whose extra CPU is the logs'.
            "cost_profile": cost_profile.cost_profile(cpu_profile, cell)
            if spec.control is None
            else None,
        }
    )


def build(
    runs: list[RunRecord],
    profile: Profile,
    servers: Record | None,
    environment: Record | None,
    crypto: Record | None = None,
    cpu_profile: Record | None = None,
    pg_record: Record | None = None,
) -> AtRestSummary:
    """`servers`: MariaDB's servers' record (at-rest.json); `pg_record`: PostgreSQL's
    (pg-at-rest.json)."""
    cores = cells.cores_of(environment)
    skipped = (servers or {}).get("skipped") or {}  # cells a target could not measure
    # MySQL (a sandbox's family, or a target's) counts no pages through its cipher: no
    # floor can be drawn from its counters.
    counts_pages = installs.recorded_family(servers) == installs.MARIADB
    m = measure_options(profile)
    # The study's cells of every kind, one family for Holm's adjustment (docs/method.md).
    own = [r for r in runs if r.cell.kind == MARIADB]
    return AtRestSummary(
        **study_fields(
            cells_of(profile, RunRecord.STUDY),
            runs,
            rule_of(profile, RunRecord.STUDY),
            PRIMARY,
            lambda cell, state: summarize_cell(
                cell,
                state,
                profile,
                crypto,
                cores,
                cpu_profile,
                skipped.get(cell.slug),
                counts_pages,
            ),
            cores,
            cell_name,
        ),
        write_workload_state=WRITE_STATE_NOTE
        + "".join(
            f" {growth.STEADY_DATA_NOTE if m.write_window == 'steady' else growth.DATA_NOTE}"
            for w in m.workloads
            if w in growth.GROWING_WORKLOADS
        ),
        servers=servers,
        crypto=crypto,
        # The profile's, as the runs recorded it (a resumed run cannot change it).
        sharing=own[0].sharing if own else measure_options(profile).sharing,
        server_cpus=sorted({r.server_cpus for r in own if r.server_cpus}),
        client_cpus=sorted({r.client_cpus for r in own if r.client_cpus}),
        # As the servers were run (a record from before `restart` existed: per regime).
        restart=str((servers or {}).get("restart", "regime")),
        server_starts=None if profile.target is not None else server_starts(servers),
        disk_reads_not_measured=disk_reads_not_measured(profile, servers),
        postgresql=pg_servers(profile, pg_record),
    )


def pg_servers(profile: Profile, record: Record | None) -> PgServers | None:
    """PostgreSQL's servers as its side's record has them (None: its cells not asked)."""
    if not any(c.kind == POSTGRESQL for c in cells_of(profile, RunRecord.STUDY)):
        return None
    record = record or {}
    return PgServers(
        **recorded(record, ("postgresql_version", "server_user", "data_bytes", "regimes")),
        filesystem=record.get("filesystem"),
        scale=int(record.get("scale", pg_at_rest_options(profile).scale)),
    )


def disk_reads_not_measured(
    profile: Profile, servers: Record | None
) -> DiskReadsNotMeasured | None:
    """Whether the target's buffer pool, as the run read it (at-rest.json), was too large for
    the profile's data to be io-bound — whatever regimes the profile asked for."""
    target = (servers or {}).get("target") or {}
    if profile.target is None or "buffer_pool_mb" not in target:
        return None
    pool_bytes = target.get("buffer_pool_bytes", target["buffer_pool_mb"] * 2**20)
    fit = target_regimes.fit("io-bound", pool_bytes, profile)
    if fit.possible:
        return None
    return DiskReadsNotMeasured(
        buffer_pool_mb=fit.pool_mb,
        data_mb=fit.data_mb,
        data_over_pool=fit.factor,
        largest_pool_mb=(
            fit.limit_mb if fit.limit_mb >= profile.regime.min_buffer_pool_mb else None
        ),
        table_size=fit.table_size,
        sandbox=target_regimes.sandbox_command(profile),
    )


def cell_name(cell: CellKey) -> str:
    """A cell in words as the report's sections name it: its table's title and its row (a
    further kind's named first)."""
    if cell.kind != MARIADB:
        clients = f"{cell.threads} client{'s' if cell.threads != 1 else ''}"
        return f"{server_kind.named(cell.kind).title}: {cell.workload}, {cell.regime}, {clients}"
    where = ", ".join(x for x in (cell.workload, cell.regime, cell.configuration) if x)
    where += f", shape {cell.shape}" if cell.shape else ""
    return f"{where}, {cell.threads} thread{'s' if cell.threads != 1 else ''}"


def server_starts(record: Record | None) -> int:
    """How many times both servers started in a regime, over every configuration and shape
    of at-rest.json (each regime's `starts`; a record from before it counts one start)."""
    if not isinstance(record, dict):
        return 0
    regimes = record.get("regimes")
    own = sum(int(r.get("starts", 1)) for r in regimes.values()) if regimes else 0
    nested = [v for key in ("configurations", "shapes") for v in (record.get(key) or {}).values()]
    return own + sum(server_starts(v) for v in nested)
