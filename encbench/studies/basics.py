"""What every study class does alike, written once: its metrics are its record's, and before
any server it records the machine (studies/machine.py).  A study whose preparation does more
overrides `prepare` and calls this one first."""

from __future__ import annotations

from typing import Any

from encbench.results.schema import Metric
from encbench.results.store import ResultStore
from encbench.studies import machine


class StudyBasics:
    record_type: type[Any]
    store: ResultStore

    @property
    def metrics(self) -> tuple[Metric, ...]:
        metrics: tuple[Metric, ...] = self.record_type.METRICS
        return metrics

    def prepare(self) -> None:
        machine.record_environment(self.store)
