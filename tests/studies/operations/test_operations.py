"""The operations study's own parts without servers: its cells, the crash recovery's redo
from a real error log, its record, key rotation's status, its part of the report, and the
engine driving a study of timed operations (no warm-up, a lower-is-better time)."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import rendering
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner
from encbench.engine.study import Run
from encbench.errors import BadInput, ProofError
from encbench.profiles.profile import Profile, parse
from encbench.report import documents, markdown
from encbench.results.store import ResultStore
from encbench.studies.operations import cells, recovery, rotation
from encbench.studies.operations import section as operations_section
from encbench.studies.operations import summary as operations
from encbench.studies.operations.options import OperationsSpec
from encbench.studies.operations.records import OperationCell, OperationRecord
from encbench.studies.operations.study import OperationsStudy
from encbench.studies.operations.tablespaces import count_key_versions, count_states
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "operations"


def a_profile(extra: str = "") -> Profile:
    return parse(f'name = "ops"\nstudies = ["operations"]\n{extra}', "p.toml")


def test_each_operation_is_one_cell_and_encrypting_one_per_thread_count() -> None:
    profile = a_profile("[operations]\nencryption_threads = [1, 2, 4]\n")
    assert [c.label for c in cells.cells(profile)] == [
        "start-up",
        "crash recovery",
        "encrypting existing data, 1 encryption thread",
        "encrypting existing data, 2 encryption threads",
        "encrypting existing data, 4 encryption threads",
        "mariadb-backup --backup",
        "mariadb-backup --prepare",
    ]
    assert cells.cells(parse('name = "x"\n', "p.toml")) == []
    assert OperationCell("encrypt-existing", 2).slug == "encrypt-existing-t2"
    assert OperationCell("encrypt-existing", 2).unit == "ms/txn"
    assert OperationCell("startup").unit == "s"


def test_the_smoke_operations_profile_encrypts_existing_data_at_one_and_two_threads() -> None:
    """The built-in smoke profile's cells, by the real parser: its integration test runs it
    at one encryption thread (tests/integration/test_operations_run.py)."""
    from encbench.profiles import profile as profiles

    smoke, _ = profiles.load("smoke-operations")
    assert [c.slug for c in cells.cells(smoke)] == [
        "startup",
        "crash-recovery",
        "encrypt-existing-t1",
        "encrypt-existing-t2",
        "key-rotation",
        "backup",
        "prepare",
    ]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("encryption_threads = [0]", "0 encryption threads is out of range"),
        ("encryption_threads = [2, 256]", "use 1 to 255"),
        ("encryption_threads = [2, 2]", "listed twice"),
        ('operations = ["fsck"]', "unknown operation 'fsck'"),
        ("load_threads = 0", "0 is out of range; use 1 to 590"),
    ],
)
def test_bad_operations_settings_are_one_line_naming_the_fix(line: str, fragment: str) -> None:
    with pytest.raises(BadInput) as caught:
        a_profile(f"[operations]\n{line}\n")
    assert fragment in str(caught.value)
    assert str(caught.value).startswith("p.toml: operations.")
    assert "\n" not in str(caught.value)


def test_an_operations_calibration_is_refused() -> None:
    with pytest.raises(BadInput, match="no A/A calibration"):
        a_profile("calibration = true\n")


def test_crash_recovery_redo_is_read_from_a_real_error_log() -> None:
    found = recovery.parse((GOLDEN / "crash-recovery-error.log").read_text())
    assert (found.checkpoint_lsn, found.end_lsn, found.pages) == (2891439, 5746752, 187)
    assert found.redo_bytes == 5746752 - 2891439


def test_a_start_without_crash_recovery_is_no_measurement_of_one() -> None:
    clean = "InnoDB: log sequence number 9977567; transaction id 10381\nready for connections."
    with pytest.raises(ProofError, match="without a crash recovery"):
        recovery.parse(clean, "plain")


def test_key_rotation_is_one_cell_between_encrypting_and_backup() -> None:
    profile = a_profile(
        '[operations]\noperations = ["encrypt-existing", "key-rotation", "backup"]\n'
        "encryption_threads = [2]\n"
    )
    assert [c.slug for c in cells.cells(profile)] == [
        "encrypt-existing-t2", "key-rotation", "backup",
    ]  # fmt: skip
    assert OperationCell("key-rotation").unit == "ms/txn"
    assert OperationCell("key-rotation").label == "key rotation"


def test_key_rotation_says_whether_it_is_measured_and_why_not(tmp_path: Path) -> None:
    (tmp_path / "file_key_management.so").touch()
    (tmp_path / "ha_archive.so").touch()
    measured = rotation.status(True, tmp_path)
    assert measured["measured"] is True and measured["key_plugin"] == "encbench_key_management"
    assert measured["key_plugins"] == ["file_key_management"]
    unasked = rotation.status(False, tmp_path)
    assert unasked["measured"] is False
    assert 'add "key-rotation" to operations.operations' in unasked["reason"]
    missing = rotation.status(True, tmp_path, problem="needs a C compiler: apt-get install gcc")
    assert missing["measured"] is False
    assert "one version" in missing["reason"] and "apt-get install gcc" in missing["reason"]


def record(
    cell: OperationCell, rnd: int, variant: str, position: int, time: float
) -> OperationRecord:
    encrypting = cell.operation == "encrypt-existing" and variant == "encrypted"
    return OperationRecord(
        cell=cell, round=rnd, variant=variant, position=position, session="s",
        started_at="t", wall_s=2.0, time=time, time_unit=cell.unit, timed_s=1.0,
        harness_cpu_s=0.01, other_cpu_s=0.0, steal_s=0.0, interference_pct=0.0,
        tables_encrypted=3 if variant == "encrypted" else 0, tables=3,
        redo_bytes=3 << 20 if cell.operation == "crash-recovery" else 0,
        foreground_tps=1000.0 / time if cell.operation == "encrypt-existing" else 0.0,
        encryption_s=0.5 if encrypting else 0.0,
        encrypted_bytes=100 << 20 if encrypting else 0,
    )  # fmt: skip


def test_a_record_refuses_an_impossible_time_and_reads_back_as_written() -> None:
    cell = OperationCell("startup")
    with pytest.raises(ValueError, match="impossible run"):
        record(cell, 0, "plain", 0, 0.0)
    kept = record(OperationCell("encrypt-existing", 2), 3, "encrypted", 1, 2.0)
    data = kept.to_json()
    assert data["encryption_mib_per_s"] == pytest.approx(200.0)
    assert OperationRecord.from_json(data) == kept


def rounds_of(cell: OperationCell, n: int, plain: float, cost: float) -> list[OperationRecord]:
    rng = random.Random(1)
    runs = []
    for rnd in range(n):
        order = ("plain", "encrypted") if rnd % 2 == 0 else ("encrypted", "plain")
        noise = 1 + rng.uniform(-0.01, 0.01)
        for position, variant in enumerate(order):
            t = plain * noise * (1 + cost if variant == "encrypted" else 1)
            runs.append(record(cell, rnd, variant, position, t))
    return runs


CRYPTO = {
    "ciphers": [
        {"cipher": "aes-256-ctr", "block_bytes": 16384, "accel": True, "cores": 1,
         "direction": "encrypt", "mb_per_s_mean": 2097.152},
    ]
}  # fmt: skip


def test_the_report_gives_times_with_intervals_and_the_rate_per_thread_against_the_cipher() -> None:
    profile = a_profile(
        '[server]\nencryption_scope = "all"\n[operations]\n'
        'operations = ["startup", "encrypt-existing"]\nencryption_threads = [2]\n'
    )
    startup, encrypting = cells.cells(profile)
    runs = rounds_of(startup, 12, 1.5, 0.2) + rounds_of(encrypting, 12, 2.0, 0.5)
    record_json = {"key_rotation": rotation.status(False, Path("/nonexistent"))}
    part = operations.build(runs, profile, record_json, CRYPTO)
    first, second = part.cells
    assert first.comparisons["time"].kind == "cost"
    assert 15 < first.comparisons["time"].overhead_pct < 25
    # a time is longer, not "higher" (issue #11)
    assert first.comparisons["time"].verdict.startswith("20.0% longer (95% CI ")
    assert first.variants is not None and first.variants.plain.time.ci95 is not None
    assert second.variants is not None and second.variants.encrypted.foreground_tps is not None
    # 100 MiB in 0.5 s with 2 threads: 100 MiB/s per thread, against 2,000 MiB/s on one core
    assert second.mib_per_s_per_thread is not None
    assert second.mib_per_s_per_thread.mean == pytest.approx(100.0)
    assert second.cipher_mib_per_s_per_core == pytest.approx(2000.0)
    text = markdown.render_blocks(
        operations_section.sections(part.model_copy(update={"crash_load_s": 5}))
    )
    assert "| start-up | 1.499 s (1.494–1.505) | 1.799 s (1.792–1.806) | +20.0%" in text
    assert "| 2 | 0.500 s (0.500–0.500) | 200 (200–200) | 100 (100–100) | 2,000 | 5% |" in text
    assert "**Key rotation**: not measured" in text


@dataclass
class TimedStudy:
    """A study of timed operations as the engine sees it: no warm-up, encrypted 20% slower."""

    rule: OperationsSpec
    calls: list[str] = field(default_factory=list)
    name: str = "operations"
    record_type: type[OperationRecord] = OperationRecord
    together: bool = False  # main's engine: never a duet round

    @property
    def metrics(self) -> tuple[Any, ...]:
        return OperationRecord.METRICS

    def cells(self) -> Sequence[OperationCell]:
        return [OperationCell("startup")]

    def prepare(self) -> None:
        pass

    @contextmanager
    def setup(self, todo: Sequence[OperationCell]) -> Iterator[None]:
        yield

    @contextmanager
    def open_cell(self, cell: OperationCell) -> Iterator[None]:
        yield

    def warm_up(self, cell: OperationCell, variant: str, seconds: int, raw: Path) -> None:
        self.calls.append("warm_up")

    def measure(self, run: Run) -> OperationRecord:
        self.calls.append(f"measure {run.variant}")
        t = 1.2 * (1 + 0.01 * (run.round % 3)) if run.variant == "encrypted" else 1.0
        return record(run.cell, run.round, run.variant, run.position, t)

    def prove(self, rec: OperationRecord) -> None:
        self.calls.append("prove")


def test_the_engine_times_operations_without_warm_up_and_calls_a_longer_time_a_cost(
    tmp_path: Path,
) -> None:
    store = ResultStore.create(tmp_path / "r", "ops", 'name = "ops"\n')
    study = TimedStudy(OperationsSpec(min_rounds=12, max_rounds=12))
    Runner(store, RunProgress(0), lambda _: None, rng=random.Random(3)).run([study])
    assert "warm_up" not in study.calls
    assert study.calls.count("prove") == 24
    runs = store.runs(OperationRecord)
    profile = a_profile('[operations]\noperations = ["startup"]\nmin_rounds = 12\n')
    comp = operations.build(runs, profile, None, None).cells[0].comparisons["time"]
    assert comp.kind == "cost" and comp.overhead_pct > 15


def test_table_states_count_only_the_study_databases_wholly_encrypted_tables() -> None:
    from encbench.studies.operations.study import count_states

    rows = [
        ("sbtest/sbtest1", 1, 1, 0, None),  # encrypted
        ("sbtest/sbtest2", 1, 0, 0, None),  # scheme 1, but a page still at version 0
        ("sbtest/sbtest3", 0, 0, 0, None),  # crypt data, not encrypted
        ("other/t1", 1, 1, 0, None),  # another database: not counted
    ]
    assert count_states(rows, "sbtest") == (3, 1, False)
    # Any tablespace rotating or with a page number to go makes the server busy, ours or not.
    assert count_states([*rows, ("other/t2", 1, 1, 1, None)], "sbtest")[2] is True
    assert count_states([*rows, ("innodb_system", 1, 1, 0, 17)], "sbtest")[2] is True


def test_key_version_states_count_tables_wholly_at_the_version_or_later() -> None:
    rows = [
        ("sbtest/sbtest1", 1, 3, 0, None),  # rotated
        ("sbtest/sbtest2", 1, 1, 0, None),  # its oldest page still at version 1
        ("sbtest/sbtest3", 1, 5, 0, None),  # later still
    ]
    assert count_key_versions(rows, "sbtest", 3) == (3, 2, False)
    assert count_key_versions(rows, "sbtest", 1) == count_states(rows, "sbtest")


def rotation_record(
    variant: str, before: int, after: int, at: int, time: float = 2.0
) -> OperationRecord:
    rotating = variant == "encrypted"
    return OperationRecord(
        cell=OperationCell("key-rotation"), round=0, variant=variant, position=0, session="s",
        started_at="t", wall_s=3.0, time=time, time_unit="ms/txn", timed_s=1.0,
        harness_cpu_s=0.01, other_cpu_s=0.0, steal_s=0.0, interference_pct=0.0,
        tables_encrypted=3, tables=3, foreground_tps=1000.0 / time, foreground_transactions=500,
        encryption_s=1.0 if rotating else 0.0, encrypted_bytes=50 << 20 if rotating else 0,
        key_version_from=before, key_version=after, tables_at_key_version=at,
    )  # fmt: skip


def study_for_proof() -> OperationsStudy:
    return OperationsStudy.__new__(OperationsStudy)


def test_a_rotating_run_is_proven_only_when_every_table_has_the_version_two_up() -> None:
    prove = study_for_proof().prove
    prove(rotation_record("encrypted", 1, 3, 3))
    prove(rotation_record("plain", 3, 3, 3))
    with pytest.raises(ProofError, match="2 of 3 tables wholly at key version 3"):
        prove(rotation_record("encrypted", 1, 3, 2))
    with pytest.raises(ProofError, match="key version 1 → 2, not 3"):
        prove(rotation_record("encrypted", 1, 2, 3))
    # the non-rotating side must not have moved the version
    with pytest.raises(ProofError, match="non-rotating run must leave every table encrypted"):
        prove(rotation_record("plain", 3, 5, 3))
    unencrypted = dataclasses.replace(rotation_record("plain", 3, 3, 3), tables_encrypted=2)
    with pytest.raises(ProofError, match="2 of 3 tables encrypted"):
        prove(unencrypted)


def test_the_report_names_key_rotations_sides_rotating_and_not() -> None:
    profile = a_profile('[operations]\noperations = ["key-rotation"]\n')
    runs = []
    for rnd in range(4):
        for position, variant in enumerate(("plain", "encrypted")):
            t = 2.0 if variant == "plain" else 2.5
            rec = rotation_record(variant, 1 + 2 * rnd, 1 + 2 * rnd + (2 if position else 0), 3, t)
            runs.append(dataclasses.replace(rec, round=rnd, position=position))
    part = operations.build(runs, profile, {"key_rotation": rotation.status(True)}, None)
    text = markdown.render_blocks(
        operations_section.sections(part.model_copy(update={"crash_load_s": 5}))
    )
    assert "| key rotation | not rotating: 2.000 ms/txn (" in text
    assert "| rotating: 2.500 ms/txn (" in text
    assert re.search(r"foreground 500 txn/s \S* ?not rotating, 400 txn/s \S* ?while rotating", text)
    assert re.search(r"re-encryption 1\.00 s \S* ?at 50 MiB/s", text)
    assert "**Key rotation**: Debian's file_key_management keys have one version" in text


def test_an_operations_report_states_encbenchs_own_share_of_the_machine() -> None:
    """The issues hold the harness to 1% of the machine; a report without at-rest cells
    must still say what it was (it was said only in the at-rest setup lines)."""
    profile = a_profile('[operations]\noperations = ["startup"]\n')
    (startup,) = cells.cells(profile)
    runs = rounds_of(startup, 12, 1.5, 0.2)
    record_json = {"key_rotation": rotation.status(False, Path("/nonexistent"))}
    part = operations.build(runs, profile, record_json, CRYPTO)
    env = {"cpu": {"cores": 2}}
    summary = documents.summarize("ops", env, {"operations": part})
    # 12 rounds × 2 runs × 0.01 s of encbench's CPU over 24 × 1 s timed, on 2 cores
    assert summary.harness.share_of_machine_pct == pytest.approx(
        100 * 0.24 / (part.harness.measured_wall_s * 2)
    )
    text = markdown.render(rendering.document(summary))
    assert f"= {summary.harness.share_of_machine_pct:.2f}% of the machine." in text
    assert "encbench's own CPU during measured windows: 0.24 s over" in text
