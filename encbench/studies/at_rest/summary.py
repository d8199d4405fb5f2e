"""The at-rest part of summary.json: every cell's paired estimates and verdicts, built from
at-rest.jsonl alone (plus the profile and the records of servers, environment and cipher
speed), so that `encbench report DIR` re-renders exactly what the run wrote."""

from __future__ import annotations

from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report.cells import cores_of
from encbench.report.models import Estimate, Harness, Pair, Record, Spread, adjust
from encbench.results.schema import RunRecord, primary_metric
from encbench.studies.at_rest import cost_profile, floor, growth
from encbench.studies.at_rest.cells import cells as at_rest_cells
from encbench.studies.at_rest.cells import configuration
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary, AtRestVariant
from encbench.studies.at_rest.options import measure_options

# Shown per variant beside the compared metrics: what the regime did to the buffer pool.
EVIDENCE = ("hit_ratio", "pages_read_per_txn", "pages_written_per_txn")
WRITE_STATE_NOTE = (
    "Both variants start from the same data (sysbench prepare with --rand-seed=1). Write "
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
    spreads = {
        name: Spread.of([float(getattr(r, name)) for r in runs])
        for name in names
        if measured(runs, name)
    }
    return AtRestVariant(
        **spreads,
        errors=sum(r.ignored_errors for r in runs),
        reconnects=sum(r.reconnects for r in runs),
    )


def comparisons(state: plan.CellRounds, rule: plan.StopRule) -> dict[str, Estimate]:
    """Every metric's estimate over the cell's blocks; rounds without a complete block give
    a ratio without an interval."""
    runs = [run for r in state.counted for run in r.runs.values()]
    metrics = tuple(m for m in RunRecord.METRICS if measured(runs, m.name))
    if not state.blocks:
        return {m.name: Estimate.too_few(state.counted, m.name, m.direction) for m in metrics}
    return {m.name: Estimate.of_blocks(state.blocks, m.name, m.direction, rule) for m in metrics}


def other_load_pct(rounds: list[plan.Round], cores: int) -> float:
    """Other processes' CPU (and stolen CPU) during this cell's measured runs, as a share of
    the machine: the load its rounds had to share the machine with."""
    runs = [run for r in rounds for run in r.runs.values()]
    wall = sum(r.wall_s for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    return 100.0 * other / (wall * cores) if wall > 0 else 0.0


def harness_share(runs: list[RunRecord], cores: int) -> Harness:
    """encbench's own CPU while sysbench was measuring, as a share of the whole machine."""
    return Harness.of(sum(r.harness_cpu_s for r in runs), sum(r.wall_s for r in runs), cores)


def summarize_cell(
    state: plan.CellRounds,
    profile: Profile,
    crypto: Record | None,
    cores: int,
    cpu_profile: Record | None = None,
) -> AtRestCell:
    rounds = state.counted
    first = rounds[0].runs["plain"].cell
    base = AtRestCell(
        workload=first.workload,
        regime=first.regime,
        threads=first.threads,
        algorithm=first.algorithm,
        scope=first.scope,
        shape=first.shape,
        rounds=len(rounds),
        rounds_rejected=len(state.rejected),
        measured_s=state.wall_s,
        status="",
    )
    variants = Pair[AtRestVariant](
        plain=variant_stats([r.runs["plain"] for r in rounds]),
        encrypted=variant_stats([r.runs["encrypted"] for r in rounds]),
    )
    compared = comparisons(state, measure_options(profile))
    return base.model_copy(
        update={
            "other_load_pct": other_load_pct(rounds, cores),
            "status": plan.stop_reason(state, measure_options(profile), PRIMARY)
            or "incomplete (run stopped before the cell finished)",
            "variants": variants,
            "comparisons": compared,
            "floor": floor.cipher_floor(
                [r.runs["encrypted"] for r in rounds],
                [r.runs["plain"] for r in rounds],
                crypto,
                configuration(first, profile).algorithm,
            ),
            "cost_profile": cost_profile.cost_profile(cpu_profile, first),
        }
    )


def build(
    runs: list[RunRecord],
    profile: Profile,
    servers: Record | None,
    environment: Record | None,
    crypto: Record | None = None,
    cpu_profile: Record | None = None,
) -> AtRestSummary:
    cores = cores_of(environment)
    skipped = (servers or {}).get("skipped") or {}  # cells a target could not measure
    cells = []
    for cell in at_rest_cells(profile):
        state = plan.cell_rounds(runs, cell, measure_options(profile))
        if state.counted:
            cells.append(summarize_cell(state, profile, crypto, cores, cpu_profile))
        else:
            cells.append(
                AtRestCell(
                    workload=cell.workload,
                    regime=cell.regime,
                    threads=cell.threads,
                    algorithm=cell.algorithm,
                    scope=cell.scope,
                    shape=cell.shape,
                    rounds=0,
                    measured_s=0.0,
                    status=f"not measured: {skipped[cell.slug]}"
                    if cell.slug in skipped
                    else "not measured",
                )
            )
    m = measure_options(profile)
    cells, differences = adjust(cells, PRIMARY, m.equivalence_margin_pct, m.interference_max_pct)
    return AtRestSummary(
        target_halfwidth_pct=measure_options(profile).target_halfwidth_pct,
        differences=differences,
        write_workload_state=WRITE_STATE_NOTE
        + ("".join(f" {growth.DATA_NOTE}" for w in m.workloads if w in growth.GROWING_WORKLOADS)),
        servers=servers,
        crypto=crypto,
        harness=harness_share(runs, cores),
        cells=cells,
        # The profile's, as the runs recorded it (a resumed run cannot change it).
        sharing=runs[0].sharing if runs else measure_options(profile).sharing,
        server_cpus=sorted({r.server_cpus for r in runs if r.server_cpus}),
        client_cpus=sorted({r.client_cpus for r in runs if r.client_cpus}),
        # As the servers were run (a record from before `restart` existed: per regime).
        restart=str((servers or {}).get("restart", "regime")),
        server_starts=None if profile.target is not None else server_starts(servers),
    )


def server_starts(record: Record | None) -> int:
    """How many times both servers started in a regime, over every configuration and shape
    of at-rest.json (each regime's `starts`; a record from before it counts one start)."""
    if not isinstance(record, dict):
        return 0
    regimes = record.get("regimes")
    own = sum(int(r.get("starts", 1)) for r in regimes.values()) if regimes else 0
    nested = [v for key in ("configurations", "shapes") for v in (record.get(key) or {}).values()]
    return own + sum(server_starts(v) for v in nested)
