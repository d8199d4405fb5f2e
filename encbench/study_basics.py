"""What every study class does alike, below the studies that share it: its metrics are its
record's, and once per run, before any server starts, it records the machine and its
software (environment.json); a study whose servers encrypt also records the speed of the
cipher they will use (crypto.json, `openssl speed`: the cipher's floor and the limit MiB/s
are set against).  Each file is written once; a resumed run keeps the first one.  A study
whose preparation does more overrides `prepare` and calls this one first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from encbench import capacity, environment
from encbench.engine.progress import RunProgress
from encbench.results.schema import Metric
from encbench.results.store import ResultStore


def record_environment(store: ResultStore) -> None:
    if store.read_json("environment.json") is None:
        store.write_json("environment.json", environment.collect())


def record_cipher_speed(
    store: ResultStore, algorithms: Sequence[str], progress: RunProgress
) -> None:
    if store.read_json("crypto.json") is None:
        progress.status("measuring the cipher's speed (openssl speed)")
        plan = capacity.fingerprint_plan(*algorithms)
        store.write_json("crypto.json", capacity.measure_capacity(plan=plan).to_json())


class StudyBasics:
    record_type: type[Any]
    store: ResultStore

    @property
    def metrics(self) -> tuple[Metric, ...]:
        metrics: tuple[Metric, ...] = self.record_type.METRICS
        return metrics

    def prepare(self) -> None:
        record_environment(self.store)
