"""What every study class does alike, below the studies that share it: its metrics are its
record's, and once per run, before any server starts, it records the machine and its
software (environment.json); a study whose servers encrypt also records the speed of the
cipher they will use (crypto.json, `openssl speed`: the cipher's floor and the limit MiB/s
are set against).  Each file is written once; a resumed run keeps the first one.  A study
whose preparation does more overrides `prepare` and calls this one first.

Every run record also carries what the machine did over its timed window (the harness's and
other processes' CPU, stolen time, the data device: `window_fields`), read the same way by
every study."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from encbench import capacity
from encbench.engine.clocks import Stopwatch, Window
from encbench.engine.progress import RunProgress
from encbench.machine import disk_window, environment
from encbench.profiles.profile import Profile
from encbench.results.schema import Metric
from encbench.results.store import ResultStore
from encbench.servers import server_kind


def record_environment(store: ResultStore) -> None:
    if store.read_json("environment.json") is None:
        store.write_json("environment.json", environment.collect(server_kind.installed_versions()))


def record_cipher_speed(
    store: ResultStore,
    algorithms: Sequence[str],
    progress: RunProgress,
    repeats: int = capacity.FINGERPRINT_REPEATS,
) -> None:
    if store.read_json("crypto.json") is None:
        progress.status("measuring the cipher's speed (openssl speed)")
        plan = capacity.fingerprint_plan(*algorithms, repeats=repeats)
        store.write_json("crypto.json", capacity.measure_capacity(plan=plan).to_json())


def load_fields(window: Window) -> dict[str, Any]:
    """The fields of a run record that say what else ran over its window: the harness's and
    other processes' CPU, stolen time, and the interference they add up to."""
    return {
        "harness_cpu_s": window.harness_cpu_s,
        "other_cpu_s": window.other_cpu_s,
        "steal_s": window.steal_s,
        "interference_pct": window.interference_pct,
    }


def window_fields(watch: Stopwatch, device: str | None) -> dict[str, Any]:
    """The fields of a run record that its timed window gives (`timed(device)`): what else
    ran over it (load_fields), and what the run used of the machine and of `device`."""
    window = watch.window
    assert window is not None, "read after the timed block"
    return {**load_fields(window), "usage": window.usage(device=device or "")}


@dataclass(frozen=True)
class Given:
    """What the engine gives a study's runner when it makes it (studies/definition.runner):
    where its results go, the profile, the run's progress, and what the profile asks of the
    study as its definition read it (its Settings' rule and its cells_of): one reading of
    the profile for `plan` and the run alike."""

    store: ResultStore
    profile: Profile
    progress: RunProgress
    # Its section of the profile (the stopping rule and the rest: engine/study.py's Rule).
    rule: Any
    # Every cell the profile asks for, in the order they are measured.
    cells: Sequence[Any]


class StudyBasics:
    record_type: type[Any]
    store: ResultStore
    # As a profile's `studies` names it: its records' STUDY, unless a subclass names it.
    name: str
    # Its section of the profile as its definition read it (Given.rule), a subclass's own type
    # by a bare annotation.
    rule: Any
    # Both variants of a round timed at once (engine/study.py's duet round): off unless a study
    # says so, as at rest does for its duet (a server per variant on cores of its own).  Every
    # other study's two variants would meet in what they measure: in transit's paths in one
    # server, operations' crashes and start-ups, state transfer's donor and link, the Galera
    # pairs' cores; PostgreSQL at rest alternates its two servers.
    together = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        record_type = cls.__dict__.get("record_type")
        if record_type is not None and "name" not in cls.__dict__:
            cls.name = record_type.STUDY

    def __init__(self, given: Given) -> None:
        self.store = given.store
        self.profile = given.profile
        self.progress = given.progress
        # The device the sandboxes live on (the results directory's): its counters are read
        # around every timed window, for what bound the cell (report/bound.py).
        self.device = disk_window.device_of(given.store.path)
        self.rule = given.rule
        self._cells = given.cells

    def cells(self) -> Sequence[Any]:
        """The cells the profile asks of the study, in its order."""
        return self._cells

    @property
    def metrics(self) -> tuple[Metric, ...]:
        metrics: tuple[Metric, ...] = self.record_type.METRICS
        return metrics

    def prepare(self) -> None:
        record_environment(self.store)

    def measure_cipher_speed(self) -> None:
        """The server's cipher's speed on this machine (crypto.json), once per results
        directory: what a study sets its encryption's cost against."""
        record_cipher_speed(
            self.store,
            self.profile.server.encryption_algorithm,
            self.progress,
            repeats=self.profile.cipher_speed_repeats,
        )
