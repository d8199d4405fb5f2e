"""What a study records about the machine once per run, before any server starts: the
machine and its software (environment.json) and the speed of the cipher the servers will
use (crypto.json, `openssl speed`: the cipher's floor and the limit MiB/s are set against).
Each file is written once; a resumed run keeps the first one."""

from __future__ import annotations

from collections.abc import Sequence

from encbench import capacity, environment
from encbench.engine.progress import RunProgress
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
