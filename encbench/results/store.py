"""The results directory: created before the first measurement, appended to as runs finish.

DIR/meta.json         what this directory is (schema, profile, encbench version)
DIR/profile.toml      the profile as run (so --resume measures the same thing)
DIR/environment.json  machine, kernel, versions, CPU flags: stored once
DIR/servers.json      exact server options per variant and regime, data size, proofs
DIR/runs.jsonl        one line per finished run, flushed and fsynced at once
DIR/transit.jsonl     the same for the in-transit study's runs
DIR/summary.json      rewritten after every round
DIR/report.md         rewritten after every round
DIR/raw/              sysbench's own output of every run
DIR/private/          keys and passwords, mode 0700/0600; never copied into a report
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from encbench import __version__
from encbench.errors import BadInput
from encbench.results.schema import RUNS_SCHEMA, RunRecord, TransitRecord

META_KIND = "encbench-results"
R = TypeVar("R")


def write_json(path: Path, data: Any) -> None:
    """Atomic replace: a reader (or a crash) never sees half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)


def write_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class ResultStore:
    def __init__(self, path: Path) -> None:
        # Absolute: the servers get these paths in their options and run from elsewhere.
        self.path = path.absolute()

    # -- creating and opening --------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, profile_name: str, profile_text: str) -> ResultStore:
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            if (path / "meta.json").exists():
                raise BadInput(
                    f"{path} holds an earlier run: continue it with --resume {path}, "
                    "or choose another --out"
                )
            raise BadInput(f"{path} exists and is not an empty directory: choose another --out")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create {path}: {exc.strerror}") from exc
        store = cls(path)
        (path / "raw").mkdir(exist_ok=True)
        (path / "logs").mkdir(exist_ok=True)
        write_text(path / "profile.toml", profile_text)
        write_json(
            path / "meta.json",
            {
                "kind": META_KIND,
                "runs_schema": RUNS_SCHEMA,
                "profile": profile_name,
                "encbench": __version__,
            },
        )
        (path / "runs.jsonl").touch()
        return store

    @classmethod
    def open(cls, path: Path) -> ResultStore:
        meta_path = path / "meta.json"
        if not meta_path.exists():
            raise BadInput(f"{path} is not an encbench results directory (no meta.json)")
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError as exc:
            raise BadInput(f"{meta_path} is damaged: {exc}") from exc
        if meta.get("kind") != META_KIND:
            raise BadInput(f"{path} is not an encbench results directory")
        if meta.get("runs_schema") != RUNS_SCHEMA:
            raise BadInput(
                f"{path} was written with results schema {meta.get('runs_schema')}; this "
                f"encbench reads schema {RUNS_SCHEMA}: use the encbench version that wrote it"
            )
        return cls(path)

    @property
    def profile_text(self) -> str:
        return (self.path / "profile.toml").read_text()

    # -- runs ------------------------------------------------------------------------------
    def append(self, record: RunRecord | TransitRecord) -> None:
        name = "transit.jsonl" if isinstance(record, TransitRecord) else "runs.jsonl"
        line = json.dumps(record.to_json(), separators=(",", ":")) + "\n"
        with open(self.path / name, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def runs(self) -> list[RunRecord]:
        return self._records("runs.jsonl", RunRecord.from_json)

    def transit_runs(self) -> list[TransitRecord]:
        return self._records("transit.jsonl", TransitRecord.from_json)

    def _records(self, name: str, parse: Callable[[dict[str, Any]], R]) -> list[R]:
        records: list[R] = []
        path = self.path / name
        if not path.exists():
            return records
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            try:
                records.append(parse(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                # A line cut short by a crash: the run it describes is measured again.
                continue
        return records

    def raw_path(self, name: str) -> Path:
        return self.path / "raw" / name

    # -- documents -------------------------------------------------------------------------
    def read_json(self, name: str) -> Any:
        path = self.path / name
        return json.loads(path.read_text()) if path.exists() else None

    def write_json(self, name: str, data: Any) -> None:
        write_json(self.path / name, data)

    def write_text(self, name: str, text: str) -> None:
        write_text(self.path / name, text)
