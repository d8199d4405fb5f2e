"""summary.json: every cell's paired estimates and verdicts, built from runs.jsonl alone
(plus the profile and the records of servers and environment), so that `encbench report DIR`
re-renders exactly what the run wrote."""

from __future__ import annotations

from typing import Any

from encbench import stats
from encbench.engine import rounds as plan
from encbench.profile import Profile
from encbench.report import prediction
from encbench.results.schema import SUMMARY_SCHEMA, RunRecord
from encbench.servers.variants import VARIANTS

# metric name → (how to read it from a run, which direction is good)
METRICS: dict[str, stats.Direction] = {
    "tps": "higher_is_better",
    "qps": "higher_is_better",
    "latency_avg_ms": "lower_is_better",
    "latency_p95_ms": "lower_is_better",
    "cpu_ms_per_txn": "lower_is_better",
}


def _metric(run: RunRecord, name: str) -> float:
    return float(getattr(run, name))


def summarize_cell(rounds: list[plan.Round], profile: Profile) -> dict[str, Any]:
    target = profile.measure.target_halfwidth_pct
    variants: dict[str, Any] = {}
    for v in VARIANTS:
        runs = [r.runs[v] for r in rounds]
        entry: dict[str, Any] = {}
        for name in (*METRICS, "hit_ratio", "pages_read_per_txn", "pages_written_per_txn"):
            mean, stdev = stats.mean_and_stdev([_metric(r, name) for r in runs])
            entry[name] = {"mean": mean, "stdev": stdev}
        entry["errors"] = sum(r.ignored_errors for r in runs)
        entry["reconnects"] = sum(r.reconnects for r in runs)
        variants[v] = entry
    comparisons: dict[str, Any] = {}
    for name, direction in METRICS.items():
        estimate = stats.paired_ratio(
            [_metric(r.runs["encrypted"], name) for r in rounds],
            [_metric(r.runs["plain"], name) for r in rounds],
        )
        over, over_low, over_high = stats.overhead_pct(estimate, direction)
        comparisons[name] = {
            **estimate.to_json(),
            "overhead_pct": over,
            "overhead_ci_pct": [over_low, over_high] if estimate.n > 1 else None,
            "verdict": stats.verdict(estimate, target, direction),
        }
    return {"variants": variants, "comparisons": comparisons}


def other_load_pct(rounds: list[plan.Round], cores: int) -> float:
    """Other processes' CPU (and stolen CPU) during this cell's measured runs, as a share of
    the machine: the load its rounds had to share the machine with."""
    runs = [run for r in rounds for run in r.runs.values()]
    wall = sum(r.wall_s for r in runs)
    other = sum(r.other_cpu_s + r.steal_s for r in runs)
    return 100.0 * other / (wall * cores) if wall > 0 else 0.0


def harness_share(runs: list[RunRecord], cores: int) -> dict[str, float]:
    """encbench's own CPU while sysbench was measuring, as a share of the whole machine."""
    wall = sum(r.wall_s for r in runs)
    cpu = sum(r.harness_cpu_s for r in runs)
    return {
        "cpu_s": cpu,
        "measured_wall_s": wall,
        "share_of_machine_pct": 100.0 * cpu / (wall * cores) if wall > 0 else 0.0,
    }


def build(
    runs: list[RunRecord],
    profile: Profile,
    servers: dict[str, Any] | None,
    environment: dict[str, Any] | None,
    crypto: dict[str, Any] | None = None,
) -> dict[str, Any]:
    cores = int((environment or {}).get("cpu", {}).get("cores", 1))
    cells = []
    for cell in plan.cells(profile):
        rounds = plan.complete_rounds(runs, cell)
        entry: dict[str, Any] = {
            "workload": cell.workload,
            "regime": cell.regime,
            "threads": cell.threads,
            "rounds": len(rounds),
            "measured_s": sum(r.wall_s for r in rounds),
        }
        if rounds:
            entry["other_load_pct"] = other_load_pct(rounds, cores)
            reason = plan.stop_reason(rounds, profile.measure)
            entry["status"] = reason or "incomplete (run stopped before the cell finished)"
            entry.update(summarize_cell(rounds, profile))
            entry["prediction"] = prediction.predict(
                entry, crypto, profile.server.encryption_algorithm
            )
        else:
            entry["status"] = "not measured"
        cells.append(entry)
    return {
        "schema": SUMMARY_SCHEMA,
        "profile": profile.name,
        "method": stats.METHOD,
        "target_halfwidth_pct": profile.measure.target_halfwidth_pct,
        "write_workload_state": WRITE_STATE_NOTE,
        "environment": environment,
        "servers": servers,
        "harness": harness_share(runs, cores),
        "crypto": crypto,
        "cells": cells,
    }


WRITE_STATE_NOTE = (
    "Both variants start from the same data (sysbench prepare with --rand-seed=1). Write "
    "workloads are not reset between rounds; instead sysbench's write transactions keep the "
    "row count and row width constant (DELETE+INSERT of the same id, UPDATEs of fixed-width "
    "columns), so both variants keep the same data size, and interleaved rounds expose both "
    "to the same drift over time."
)
