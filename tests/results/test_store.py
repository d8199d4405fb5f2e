"""The results directory: created first, appended to at once, never overwritten."""

import json
import os
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.results.store import ResultStore
from encbench.studies.at_rest.records import CellKey, RunRecord


def record(round_no: int = 0, variant: str = "plain", tps: float = 100.0) -> RunRecord:
    return RunRecord(
        cell=CellKey("oltp_read_only", "in-memory", 4),
        round=round_no,
        variant=variant,
        position=0,
        session="s",
        started_at="t",
        wall_s=5.0,
        tps=tps,
        qps=tps * 16,
        transactions=int(tps * 5),
        ignored_errors=0,
        reconnects=0,
        latency_avg_ms=1.0,
        latency_p95_ms=2.0,
        latency_max_ms=3.0,
        server_cpu_s=1.0,
        cpu_ms_per_txn=2.0,
        harness_cpu_s=0.01,
        bp_read_requests=1000,
        bp_reads=10,
        pages_read=10,
        pages_written=0,
        raw_output="raw/x.txt",
    )


def test_appended_runs_read_back_identically(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", 'name = "smoke"\n')
    store.append(record(0, "plain"))
    store.append(record(0, "encrypted", 90.0))
    runs = ResultStore.open(tmp_path / "r").runs(RunRecord)
    assert [r.variant for r in runs] == ["plain", "encrypted"]
    assert runs[1] == record(0, "encrypted", 90.0)
    assert runs[0].hit_ratio == pytest.approx(0.99)


def test_a_line_cut_short_by_a_crash_is_not_a_run(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    store.append(record())
    with open(store.path / "at-rest.jsonl", "a") as f:
        f.write('{"schema": 1, "cell": {"work')
    assert ResultStore.open(store.path).runs(RunRecord) == [record()]


def test_a_torn_last_line_is_cut_off_before_the_next_append_and_kept_in_logs(
    tmp_path: Path,
) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    store.append(record(0, "plain"))
    with open(store.path / "at-rest.jsonl", "a") as f:
        f.write('{"schema": 1, "cell": {"work')
    resumed = ResultStore.open(store.path)
    resumed.append(record(0, "encrypted", 90.0))
    assert resumed.runs(RunRecord) == [record(0, "plain"), record(0, "encrypted", 90.0)]
    assert '{"schema": 1, "cell": {"work' in (store.path / "logs" / "torn-lines.txt").read_text()


def test_a_damaged_line_inside_the_file_is_refused_not_skipped(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    store.append(record(0, "plain"))
    with open(store.path / "at-rest.jsonl", "a") as f:
        f.write("garbage\n")
    store.append(record(0, "encrypted", 90.0))
    with pytest.raises(BadInput, match="line 2, is damaged"):
        store.runs(RunRecord)


def test_a_line_of_another_schema_is_refused_with_its_number(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    line = record().to_json() | {"schema": 7}
    (store.path / "at-rest.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(BadInput, match="line 1, has schema 7, not 1"):
        store.runs(RunRecord)


def test_each_study_has_its_own_file_named_in_meta(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", 'name = "smoke"\n')
    store.append(record())
    meta = json.loads((store.path / "meta.json").read_text())
    assert meta["files"] == {
        "at-rest.jsonl": {"schema": 1},
        "in-transit.jsonl": {"schema": 2},
        "operations.jsonl": {"schema": 1},
        "state-transfer.jsonl": {"schema": 1},
        "replication.jsonl": {"schema": 1},
        "rejoin.jsonl": {"schema": 1},
    }
    assert (store.path / "at-rest.jsonl").exists()
    assert not (store.path / "in-transit.jsonl").exists()


def test_a_live_directory_is_refused_to_a_second_run_naming_the_live_one(
    tmp_path: Path,
) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    second = ResultStore.open(store.path)
    with pytest.raises(BadInput, match=f"in use by a live encbench run \\(pid {os.getpid()}\\)"):
        second.lock()
    store.unlock()
    second.lock()  # free once the first let go
    second.unlock()


def test_the_lock_is_dropped_when_its_process_dies(tmp_path: Path) -> None:
    import subprocess
    import sys

    store = ResultStore.create(tmp_path / "r", "smoke", "")
    store.unlock()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from encbench.results.store import ResultStore; "
            f"ResultStore.open(Path({str(store.path)!r})).lock(); print('locked', flush=True); "
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(BadInput, match=f"pid {holder.pid}"):
            ResultStore.open(store.path).lock()
    finally:
        holder.kill()
        holder.wait()
    ResultStore.open(store.path).lock()


def test_resume_refuses_a_changed_profile_unless_forced(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", 'name = "smoke"\n')
    store.check_profile_unchanged(force=False)
    (store.path / "profile.toml").write_text('name = "smoke"\n[measure]\nthreads = [8]\n')
    with pytest.raises(BadInput, match=r"changed since the run began.*--force"):
        store.check_profile_unchanged(force=False)
    store.check_profile_unchanged(force=True)
    store.check_profile_unchanged(force=False)  # the new profile is now the run's


def test_refuses_a_directory_that_holds_other_files(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("not encbench's")
    with pytest.raises(BadInput, match="exists and is not an empty directory"):
        ResultStore.create(tmp_path, "smoke", "")
    assert (tmp_path / "mine.txt").read_text() == "not encbench's"


def test_refuses_to_start_over_an_earlier_run_and_points_to_resume(tmp_path: Path) -> None:
    ResultStore.create(tmp_path / "r", "smoke", "")
    with pytest.raises(BadInput, match="--resume"):
        ResultStore.create(tmp_path / "r", "smoke", "")


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    meta = json.loads((store.path / "meta.json").read_text())
    meta["files"]["at-rest.jsonl"]["schema"] = 99
    (store.path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(BadInput, match="schema 99"):
        ResultStore.open(store.path)


def test_refuses_a_directory_of_the_older_layout_naming_it(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    meta = {"kind": "encbench-results", "runs_schema": 1, "encbench": "0.1.0"}
    (store.path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(BadInput, match="older layout"):
        ResultStore.open(store.path)


def test_impossible_runs_are_refused() -> None:
    with pytest.raises(ValueError, match="impossible run"):
        record(tps=0.0)


def test_secrets_are_created_private(tmp_path: Path) -> None:
    from encbench.servers import keys

    private = keys.private_dir(tmp_path)
    key_file = keys.key_file(private)
    keys.password(private, "plain")
    assert oct(os.stat(private).st_mode & 0o777) == "0o700"
    for path in private.iterdir():
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert key_file.read_text().startswith("1;")
    assert len(key_file.read_text().strip().split(";")[1]) == 64


def test_the_private_directory_is_removed_when_the_run_is_finished(tmp_path: Path) -> None:
    from encbench.servers import keys

    keys.key_file(keys.private_dir(tmp_path))
    keys.remove_private(tmp_path)
    assert not (tmp_path / "private").exists()


def test_a_record_is_checked_field_by_field_and_its_json_line_reads_back_equal() -> None:
    import dataclasses

    from tests.studies.state_transfer.test_state_transfer import record

    run = record("plain", 1, 4.0)
    line = run.to_json()
    assert type(run).from_json(json.loads(json.dumps(line))) == run
    # A string or a bool where a number belongs is refused, not coerced.
    with pytest.raises(ValueError, match="sync_s"):
        type(run).from_json({**line, "sync_s": "4.0"})
    with pytest.raises(ValueError, match="round"):
        dataclasses.replace(run, round=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.sync_s = 5.0  # type: ignore[misc]


def test_a_file_an_earlier_encbench_wrote_for_a_study_is_read_as_its_records(
    tmp_path: Path,
) -> None:
    """pg-in-transit.jsonl, PostgreSQL's in-transit runs when they were a study of their
    own: read as the in-transit study's, after its own file's; another schema refused."""
    from encbench.studies.in_transit import TransitRecord
    from tests.helpers import GOLDEN_ROOT

    store = ResultStore.create(tmp_path / "r", "smoke", 'name = "smoke"\n')
    earlier = (GOLDEN_ROOT / "pg-in-transit" / "pg-in-transit.jsonl").read_text()
    (store.path / "pg-in-transit.jsonl").write_text(earlier)
    runs = store.runs(TransitRecord)
    assert len(runs) == len(earlier.splitlines()) and store.has_runs("in-transit")
    first = json.loads(earlier.splitlines()[0])
    assert (runs[0].rate, runs[0].events, runs[0].tls_handshakes) == (
        first["tps"],
        first["transactions"],
        first["tls_connections"],
    )
    assert runs[0].cell.kind == "postgresql" and runs[0].cell.threads == first["cell"]["clients"]
    (store.path / "pg-in-transit.jsonl").write_text(json.dumps(first | {"schema": 9}) + "\n")
    with pytest.raises(BadInput, match="line 1, has schema 9, not 1"):
        store.runs(TransitRecord)
