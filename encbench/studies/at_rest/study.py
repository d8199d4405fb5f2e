"""The data-at-rest study: provision → prove → for each regime, workload and thread count,
paired rounds until the interval is tight enough or the cell's budget ends.

Lifecycle per cell: warm-up (both variants) → (round: A then B, or B then A → append each
run to runs.jsonl → rewrite summary.json and report.md)* → next cell.  Nothing is measured
twice on --resume: finished rounds are read back and the stopping rule continues from them.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import capacity as crypto
from encbench import environment
from encbench.engine import rounds as plan
from encbench.engine.clocks import Clocks, Window
from encbench.engine.progress import RunProgress
from encbench.profile import Profile
from encbench.report import summary
from encbench.report.documents import render_documents
from encbench.results.schema import CellKey, RunRecord
from encbench.results.store import ResultStore
from encbench.servers.variants import VARIANTS, Variant
from encbench.studies.at_rest.pair import ServerPair
from encbench.workloads import sysbench


def _status_counters(status: dict[str, str]) -> dict[str, int]:
    keys = (
        "Innodb_buffer_pool_read_requests",
        "Innodb_buffer_pool_reads",
        "Innodb_pages_read",
        "Innodb_pages_written",
    )
    return {k: int(status.get(k, 0)) for k in keys}


class AtRestStudy:
    def __init__(self, store: ResultStore, profile: Profile, progress: RunProgress) -> None:
        self.store = store
        self.profile = profile
        self.progress = progress
        self.session = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}"
        self.runs: list[RunRecord] = store.runs()
        self.cells_done = 0

    # -- the whole study -------------------------------------------------------------------
    def run(self) -> None:
        if self.store.read_json("environment.json") is None:
            self.store.write_json("environment.json", environment.collect())
        if self.store.read_json("crypto.json") is None:
            self.progress.status("measuring the cipher's speed (openssl speed)")
            cipher_plan = crypto.fingerprint_plan(self.profile.server.encryption_algorithm)
            capacity = crypto.measure_capacity(plan=cipher_plan)
            self.store.write_json("crypto.json", capacity.to_json())
        todo = [c for c in plan.cells(self.profile) if not self._finished(c)]
        self.cells_done = len(plan.cells(self.profile)) - len(todo)
        self.progress.set_completed(self.cells_done * self._cell_share())
        if not todo:
            self.progress.log("every cell is already finished; nothing to measure")
            self.write_documents()
            return
        with ServerPair(self.store, self.profile) as pair:
            pair.provision(self.progress.log)
            self.write_documents()
            for cell in todo:
                pair.configure(cell.regime, self.progress.log)
                self.measure_cell(pair, cell)
        self.write_documents()

    def _cell_share(self) -> float:
        return plan.estimated_seconds(self.profile) / len(plan.cells(self.profile))

    def _finished(self, cell: CellKey) -> bool:
        rounds = plan.complete_rounds(self.runs, cell)
        return plan.stop_reason(rounds, self.profile.measure) is not None

    # -- one cell --------------------------------------------------------------------------
    def measure_cell(self, pair: ServerPair, cell: CellKey) -> None:
        m = self.profile.measure
        started = time.monotonic()
        if m.warmup_s:
            self.progress.status(f"{cell.label}: warm-up")
            for variant in VARIANTS:
                self._sysbench(
                    pair, cell, variant, m.warmup_s, self._raw(cell, f"warmup-{variant}")
                )
        while True:
            rounds = plan.complete_rounds(self.runs, cell)
            reason = plan.stop_reason(rounds, self.profile.measure)
            estimate = plan.tps_estimate(rounds)
            if reason is not None:
                break
            number = plan.next_round_number(self.runs, cell)
            hw = f"±{estimate.halfwidth_pct:.1f}%" if estimate and estimate.n > 1 else "±?"
            self.progress.status(f"{cell.label}: round {len(rounds) + 1}, CI so far {hw}")
            for position, variant in enumerate(plan.round_order(number)):
                record = self.measure_run(pair, cell, number, variant, position)
                self.store.append(record)
                self.runs.append(record)
            self.write_documents()
            within = min(time.monotonic() - started, self._cell_share())
            self.progress.set_completed(self.cells_done * self._cell_share() + within)
        self.cells_done += 1
        self.progress.set_completed(self.cells_done * self._cell_share())
        verdict = summary.summarize_cell(rounds, self.profile)["comparisons"]["tps"]["verdict"]
        self.progress.log(f"{cell.label}: {verdict} [{len(rounds)} rounds, {reason}]")

    def _raw(self, cell: CellKey, name: str) -> Path:
        return self.store.raw_path(f"{cell.slug}-{name}.txt")

    def _sysbench(
        self, pair: ServerPair, cell: CellKey, variant: Variant, time_s: int, log: Path
    ) -> sysbench.SysbenchResult:
        d = self.profile.data
        return sysbench.run(
            pair.connection(variant),
            cell.workload,
            tables=d.tables,
            table_size=d.table_size,
            threads=cell.threads,
            time_s=time_s,
            rand_type=self.profile.measure.rand_type,
            log=log,
        )

    def measure_run(
        self, pair: ServerPair, cell: CellKey, number: int, variant: Variant, position: int
    ) -> RunRecord:
        server = pair.servers[variant]
        raw = self._raw(cell, f"r{number:03d}-{variant}")
        before = _status_counters(server.global_status())
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        # The measured window: nothing but reading the clocks around sysbench.
        start = Clocks.read(server.pid)
        result = self._sysbench(pair, cell, variant, self.profile.measure.run_s, raw)
        window = Window.between(start, Clocks.read(server.pid))
        after = _status_counters(server.global_status())
        delta = {k: after[k] - before[k] for k in after}
        return RunRecord(
            cell=cell,
            round=number,
            variant=variant,
            position=position,
            session=self.session,
            started_at=started_at,
            wall_s=window.wall_s,
            tps=result.tps,
            qps=result.qps,
            transactions=result.transactions,
            ignored_errors=result.ignored_errors,
            reconnects=result.reconnects,
            latency_avg_ms=result.latency_avg_ms,
            latency_p95_ms=result.latency_p95_ms,
            latency_max_ms=result.latency_max_ms,
            server_cpu_s=window.server_cpu_s,
            cpu_ms_per_txn=1000.0 * window.server_cpu_s / result.transactions,
            harness_cpu_s=window.harness_cpu_s,
            client_cpu_s=window.client_cpu_s,
            other_cpu_s=window.other_cpu_s,
            steal_s=window.steal_s,
            bp_read_requests=delta["Innodb_buffer_pool_read_requests"],
            bp_reads=delta["Innodb_buffer_pool_reads"],
            pages_read=delta["Innodb_pages_read"],
            pages_written=delta["Innodb_pages_written"],
            raw_output=str(raw.relative_to(self.store.path)),
        )

    # -- documents -------------------------------------------------------------------------
    def write_documents(self, with_html: bool = False) -> dict[str, Any]:
        return render_documents(self.store, self.profile, self.runs, with_html)
