"""The results directory: created before the first measurement, appended to as runs finish.

DIR/meta.json           what this directory is: its layout version, each results file with its
                        schema version, the profile's name and hash, the encbench version
DIR/profile.toml        the profile as run (so --resume measures the same thing)
DIR/.lock               held (flock) by the one live `run` or `--resume` of this directory
DIR/environment.json    machine, kernel, versions, CPU flags: stored once
DIR/<study>.jsonl       one line per finished run of that study, flushed and fsynced at once
DIR/<study>.json        what the study records beside its runs: servers, proofs, PKI, skips
DIR/summary.json        rewritten after every round
DIR/report.md           rewritten after every round
DIR/raw/                the tools' own output of every run
DIR/logs/               server logs, tool output of the set-up, error details
DIR/private/            keys and passwords, mode 0700/0600, removed when the run is finished
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TypeVar

from encbench import __version__
from encbench.errors import BadInput


class Record(Protocol):
    """What the store needs of a run record."""

    STUDY: ClassVar[str]
    SCHEMA: ClassVar[int]

    def to_json(self) -> dict[str, Any]: ...

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self: ...


META_KIND = "encbench-results"
# meta.json's own layout: 1 had a single `runs_schema` (runs.jsonl + transit.jsonl); 2 names
# every results file with its schema.
META_VERSION = 2
# Every study's record type, registered by the list of studies (studies/__init__.py): what
# meta.json names with its schema, and what `open` checks against a results directory.
RECORD_TYPES: list[type[Record]] = []


def register_record_types(types: Sequence[type[Record]]) -> None:
    RECORD_TYPES[:] = list(types)


TORN_LINES = "logs/torn-lines.txt"
# The studies of the profile that a run left out, and why (a target; an optional study this
# machine cannot run).
NOT_MEASURED = "not-measured.json"


R = TypeVar("R", bound="Record")


def _files_of(record_type: type[Record]) -> list[tuple[str, int]]:
    """The results files a record type is read from, each with its schema: its own and
    those an earlier encbench wrote for its study."""
    earlier = [(e.study, e.schema) for e in getattr(record_type, "EARLIER", ())]
    return [(record_type.STUDY, record_type.SCHEMA), *earlier]


def results_file(study: str) -> str:
    return f"{study}.jsonl"


def profile_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


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
        self._lock_fd: int | None = None
        self._repaired: set[str] = set()

    # -- creating and opening --------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: Path,
        profile_name: str,
        profile_text: str,
        calibration: bool = False,
        overrides: Sequence[Mapping[str, Any]] = (),
    ) -> ResultStore:
        """A new results directory; refused where anything is already there.  `calibration`:
        an A/A run (both sides plain), said in meta.json for any reader of the directory;
        `overrides`: the profile keys the command line set (option, key, from, to)."""
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
        # Locked before anything else is written: a second run started at the same moment
        # into the same empty directory finds the lock taken.
        store.lock()
        if (path / "meta.json").exists():
            store.unlock()
            raise BadInput(f"{path} was just taken by another encbench run: choose another --out")
        (path / "raw").mkdir(exist_ok=True)
        (path / "logs").mkdir(exist_ok=True)
        write_text(path / "profile.toml", profile_text)
        write_json(
            path / "meta.json",
            {
                "kind": META_KIND,
                "meta_version": META_VERSION,
                "files": {results_file(t.STUDY): {"schema": t.SCHEMA} for t in RECORD_TYPES},
                "profile": profile_name,
                "profile_sha256": profile_hash(profile_text),
                "encbench": __version__,
                "calibration": calibration,
                "overrides": list(overrides),
            },
        )
        return store

    @classmethod
    def open(cls, path: Path) -> ResultStore:
        meta = cls._read_meta(path)
        files = meta.get("files", {})
        for record_type in RECORD_TYPES:
            for study, wanted in _files_of(record_type):
                name = results_file(study)
                schema = files.get(name, {}).get("schema")
                if schema is not None and schema != wanted:
                    raise BadInput(
                        f"{path / name} has schema {schema}; this encbench reads schema "
                        f"{wanted}: use the encbench version that wrote it "
                        f"({meta.get('encbench', 'unknown')})"
                    )
        return cls(path)

    @staticmethod
    def _read_meta(path: Path) -> dict[str, Any]:
        meta_path = path / "meta.json"
        if not meta_path.exists():
            raise BadInput(
                f"{path} is not an encbench results directory (no meta.json): give the "
                "directory a run wrote, e.g. results/quick-YYYYMMDD-HHMMSS"
            )
        try:
            meta = json.loads(meta_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadInput(f"{meta_path} is damaged: {exc}") from exc
        if not isinstance(meta, dict) or meta.get("kind") != META_KIND:
            raise BadInput(f"{path} is not an encbench results directory")
        if meta.get("meta_version") != META_VERSION:
            raise BadInput(
                f"{path} was written by encbench {meta.get('encbench', 'unknown')} in an older "
                f"layout (runs.jsonl); this encbench reads layout {META_VERSION}: use the "
                "version that wrote it"
            )
        return meta

    @property
    def meta(self) -> dict[str, Any]:
        return self._read_meta(self.path)

    @property
    def profile_text(self) -> str:
        return (self.path / "profile.toml").read_text()

    def check_profile_unchanged(self, force: bool) -> None:
        """--resume measures what the run began measuring: profile.toml may not have been
        edited since, unless the user says so (then the new hash is recorded)."""
        meta = self.meta
        now = profile_hash(self.profile_text)
        if meta.get("profile_sha256") == now:
            return
        if not force:
            raise BadInput(
                f"{self.path / 'profile.toml'} changed since the run began, so the runs "
                "already measured would not match the rest: restore it, or resume with "
                "--force to continue with the changed profile"
            )
        meta["profile_sha256"] = now
        meta.setdefault("profile_changes", 0)
        meta["profile_changes"] += 1
        write_json(self.path / "meta.json", meta)

    # -- the lock of a live run ------------------------------------------------------------
    def lock(self) -> None:
        """Hold DIR/.lock for this process's life (flock: the kernel drops it when the process
        dies, so a killed run never leaves a stale lock)."""
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise BadInput(
                f"{self.path} is in use by a live encbench run ({holder}): wait for it to "
                "finish, or stop it with Ctrl-C; never run `encbench clean` against a live run"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}".encode())
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                (self.path / ".lock").unlink()
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- runs ------------------------------------------------------------------------------
    def append(self, record: Record) -> None:
        name = results_file(record.STUDY)
        self._repair(name)
        line = json.dumps(record.to_json(), separators=(",", ":")) + "\n"
        with open(self.path / name, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def _repair(self, name: str) -> None:
        """A crash mid-write leaves a last line without its newline: appending to it would
        glue the next record onto it and lose both.  Cut it off (kept in logs/) once per
        session, before the first append."""
        if name in self._repaired:
            return
        self._repaired.add(name)
        path = self.path / name
        if not path.exists():
            return
        data = path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        torn = self.path / TORN_LINES
        torn.parent.mkdir(exist_ok=True)
        with open(torn, "ab") as f:
            f.write(f"{name}: ".encode() + data[keep:] + b"\n")
        with open(path, "r+b") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())

    def runs(self, record_type: type[R]) -> list[R]:
        """Every finished run of one study: its results file's, after those of the files an
        earlier encbench wrote for it (EARLIER), each line made this type's.  A last line cut
        short by a crash is not a run (it is measured again); any other unreadable line, or
        one of another schema, is refused: skipping it would silently drop a measurement."""
        records: list[R] = []
        for earlier in getattr(record_type, "EARLIER", ()):
            records += self._read(record_type, earlier.study, earlier.schema, earlier.convert)
        return records + self._read(record_type, record_type.STUDY, record_type.SCHEMA, None)

    def _read(
        self,
        record_type: type[R],
        study: str,
        wanted: int,
        convert: Callable[[dict[str, Any]], dict[str, Any]] | None,
    ) -> list[R]:
        path = self.path / results_file(study)
        if not path.exists():
            return []
        records: list[R] = []
        # The part after the last newline is "" unless a crash tore the last line: that run
        # is not counted, and is measured again.
        complete = path.read_text().split("\n")[:-1]
        for number, line in enumerate(complete, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                raise BadInput(
                    f"{path}, line {number}, is damaged (not JSON): repair or remove that "
                    "line, then try again"
                ) from None
            schema = data.get("schema") if isinstance(data, dict) else None
            if schema != wanted:
                raise BadInput(
                    f"{path}, line {number}, has schema {schema!r}, not {wanted}: "
                    "it was written by another encbench version; use that version"
                )
            try:
                records.append(record_type.from_json(convert(data) if convert else data))
            except (ValueError, KeyError, TypeError) as exc:
                raise BadInput(f"{path}, line {number}, is not a valid run: {exc}") from None
        return records

    # -- studies this run left out -----------------------------------------------------------
    def write_not_measured(self, left_out: Mapping[str, str]) -> None:
        """The profile's studies this run (or resume) leaves out, each with why: rewritten at
        every start, so a resume on a machine that can run them measures them."""
        write_json(self.path / NOT_MEASURED, dict(left_out))

    def has_runs(self, study: str) -> bool:
        """Whether the study's results file holds any run."""
        types = [t for t in RECORD_TYPES if study == t.STUDY]
        files = [f for t in types for f, _ in _files_of(t)] or [study]
        paths = [self.path / results_file(f) for f in files]
        return any(p.exists() and p.stat().st_size > 0 for p in paths)

    def not_measured(self) -> dict[str, str]:
        data = self.read_json(NOT_MEASURED)
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

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
