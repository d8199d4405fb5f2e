"""The results directory: created first, appended to at once, never overwritten."""

import json
import os
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.results.schema import CellKey, RunRecord
from encbench.results.store import ResultStore


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
    runs = ResultStore.open(tmp_path / "r").runs()
    assert [r.variant for r in runs] == ["plain", "encrypted"]
    assert runs[1] == record(0, "encrypted", 90.0)
    assert runs[0].hit_ratio == pytest.approx(0.99)


def test_a_line_cut_short_by_a_crash_is_skipped(tmp_path: Path) -> None:
    store = ResultStore.create(tmp_path / "r", "smoke", "")
    store.append(record())
    with open(store.path / "runs.jsonl", "a") as f:
        f.write('{"schema": 1, "cell": {"work')
    assert len(store.runs()) == 1


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
    meta["runs_schema"] = 99
    (store.path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(BadInput, match="schema 99"):
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
