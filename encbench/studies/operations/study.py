"""The operations study (engine/study.py): per cell, one timed operation per variant and
round, plain against encrypted, with the engine's blocks, intervals and stopping rule.

- start-up: the server is shut down cleanly (untimed), then started; timed until `SELECT 1`
  answers (probed every 10 ms).
- crash recovery: a sysbench oltp_write_only load for crash_load_s, then the server's process
  group is killed (SIGKILL, by pid) under that load; the restart is timed like a start-up and
  InnoDB's error log gives the redo it applied (recovery.py).  With scope `all` the redo log
  itself is encrypted, so recovery decrypts it; with `tables` only the pages it writes are.
- encrypting existing data: see OperationRecord — the paired metric is the foreground load's
  time per transaction with and without the background encryption, on the same server with
  the same plain tables: on the encrypted side over the encryption pass itself, on the plain
  side over foreground_s; the encryption's time and MiB/s are recorded on the encrypted side.
  Between rounds the tables are decrypted again (untimed), so each round starts from plain.
- key rotation: as encrypting existing data, on the plain server with its tables encrypted
  under encbench's own key plugin (servers/mariadb/keyplugin) at key version v: the rotating
  (`encrypted`) side's window raises the plugin's version to v + 2 and lasts until every
  page of every table has it; the other side's is foreground_s of the same load.
- backup: `mariadb-backup --backup` of the running server into the sandbox, timed; deleted.
- prepare: a backup (untimed), then `mariadb-backup --prepare` of it, timed; deleted.  The
  encrypted backup's prepare reads the key plugin's options from its own backup-my.cnf.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import Stopwatch, timed
from encbench.engine.study import Run
from encbench.engine.study_base import Given, StudyBasics, window_fields
from encbench.errors import ProofError, ToolError
from encbench.servers.local import tree_bytes
from encbench.servers.mariadb import keyplugin
from encbench.servers.mariadb.installs import find_binary
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import blame_the_server
from encbench.studies.operations import recovery, rotation
from encbench.studies.operations.options import OperationsSpec
from encbench.studies.operations.records import OperationCell, OperationRecord
from encbench.studies.operations.servers import (
    CONVERTIBLE,
    PLAIN,
    ROTATABLE,
    ROTATE_KEY_AGE,
    VERSION_STEP,
    OperationServers,
    backup_dir,
)
from encbench.studies.operations.tablespaces import (
    at_version,
    commits,
    count_states,
    key_version,
    key_version_states,
    poll_tables,
    polled_states,
    sysbench_tables,
    table_states,
    wait_key_version,
    wait_tables,
)
from encbench.workloads import sysbench

# Probe period of a timed start: small beside a start-up of a second or more.
START_POLL_S = 0.01
ENCRYPTION_TIMEOUT_S = 3600.0
BACKUP_TIMEOUT_S = 3600.0
FOREGROUND_SCRIPT = "oltp_read_write"
LOAD_RAMP_S = 1.0
CRASH_SCRIPT = "oltp_write_only"


# Named here too: tests and callers read them from the study (they live in tablespaces.py).
__all__ = ["OperationsStudy", "count_states", "polled_states"]
# The plain server's mode per cell (servers.py): both variants of these run on it.
PLAIN_MODES = {"encrypt-existing": CONVERTIBLE, "key-rotation": ROTATABLE}
VERSION_VARIABLE = f"{keyplugin.NAME}_version"


class OperationsStudy(StudyBasics):
    record_type = OperationRecord
    rule: OperationsSpec

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.servers: OperationServers | None = None

    def prepare(self) -> None:
        super().prepare()
        # The cipher's limit that encrypting existing data is set against (as at rest).
        self.measure_cipher_speed()

    @contextmanager
    def setup(self, todo: Sequence[OperationCell]) -> Iterator[OperationServers]:
        with OperationServers(self.store, self.profile) as servers:
            wanted = any(c.operation == "key-rotation" for c in self.cells())
            problem = keyplugin.problem() if wanted else None
            servers.provision(self.progress.log, rotation.status(wanted, problem=problem))
            self.servers = servers
            try:
                yield servers
            finally:
                self.servers = None

    def _servers(self) -> OperationServers:
        assert self.servers is not None, "a cell is measured inside setup()"
        return self.servers

    @contextmanager
    def open_cell(self, cell: OperationCell) -> Iterator[None]:
        mode = PLAIN_MODES.get(cell.operation, PLAIN)
        self._servers().use_plain_as(mode, self.progress.log)
        yield

    def warm_up(self, cell: OperationCell, variant: str, seconds: int, raw: Path) -> None:
        """Operations have none (warmup_s = 0): each is timed from its own cold start."""

    # -- one run ---------------------------------------------------------------------------
    def measure(self, run: Run) -> OperationRecord:
        began = time.monotonic()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        op = run.cell.operation
        servers = self._servers()
        # Encrypting existing data and key rotation run both variants on the plain server.
        server = servers.servers["plain" if op in PLAIN_MODES else run.variant]
        fields: dict[str, Any]
        with blame_the_server(server):
            if op == "startup":
                watch, fields = self._startup(server, run)
            elif op == "crash-recovery":
                watch, fields = self._crash_recovery(server, run)
            elif op == "encrypt-existing":
                watch, fields = self._encrypt_existing(server, run)
            elif op == "key-rotation":
                watch, fields = self._key_rotation(server, run)
            elif op == "backup":
                watch, fields = self._backup(server, run, prepare=False)
            else:
                watch, fields = self._backup(server, run, prepare=True)
            fields.setdefault("tables_encrypted", table_states(server)[1])
            fields.setdefault("tables", sysbench_tables(server))
        fields.setdefault("time", watch.seconds)
        return OperationRecord(
            **run.record_fields(started_at, time.monotonic() - began),
            time_unit=run.cell.unit,
            timed_s=watch.seconds,
            **window_fields(watch, self.device),
            raw_output=str(run.raw.relative_to(self.store.path)),
            **fields,
        )

    def _timed_start(self, server: SandboxServer, options: dict[str, str]) -> Stopwatch:
        with timed(self.device) as watch:
            server.start(options, poll_s=START_POLL_S)
        return watch

    def _startup(self, server: SandboxServer, run: Run) -> tuple[Stopwatch, dict[str, Any]]:
        options = dict(server.options)
        server.stop()
        watch = self._timed_start(server, options)
        run.raw.write_text(proc.tail(server.paths.error_log, 60) + "\n")
        return watch, {}

    def _crash_recovery(self, server: SandboxServer, run: Run) -> tuple[Stopwatch, dict[str, Any]]:
        options = dict(server.options)
        d = self.profile.data
        argv = sysbench.command(
            server.endpoint(),
            CRASH_SCRIPT,
            threads=self.rule.load_threads,
            time_s=self.rule.crash_load_s + 60,
            options=sysbench.oltp_options(d.tables, d.table_size),
        )
        load_log = run.raw.with_suffix(".load.txt")
        with proc.background(argv, phase="sysbench load", log=load_log) as load:
            time.sleep(self.rule.crash_load_s)
            if load.poll() is not None:
                raise ToolError(
                    "the write load before the crash ended early",
                    argv=argv,
                    returncode=load.returncode,
                    phase="crash recovery: write load",
                    tail=proc.tail(load_log),
                )
            # kill -9 under the load: the server's own process group, by its pid.
            proc.kill_group(server.pid)
            assert server.process is not None
            server.process.wait(timeout=30)
            server.stop()  # reaps it, removes its cgroup and registry entry
        log_offset = proc.log_size(server.paths.error_log)
        watch = self._timed_start(server, options)
        log = proc.log_since(server.paths.error_log, log_offset)
        run.raw.write_text(log)
        found = recovery.parse(log, server.name)
        return watch, {"redo_bytes": found.redo_bytes, "pages_recovered": found.pages}

    def _encrypt_existing(
        self, server: SandboxServer, run: Run
    ) -> tuple[Stopwatch, dict[str, Any]]:
        """The foreground load runs throughout; the measured window is the encryption pass
        (from innodb_encrypt_tables=ON until every table is encrypted) on the encrypted side,
        foreground_s of the same load on the plain side; the foreground's transactions are the
        server's own commits over the window (Com_commit: sysbench's transactions end in
        COMMIT, the harness's queries do not), so the window need not match sysbench's."""
        d, n = self.profile.data, run.cell.threads
        server.query(f"SET GLOBAL innodb_encryption_threads = {int(n)}")
        argv = sysbench.command(
            server.endpoint(),
            FOREGROUND_SCRIPT,
            threads=self.rule.load_threads,
            time_s=int(ENCRYPTION_TIMEOUT_S),
            options=sysbench.oltp_options(d.tables, d.table_size),
        )
        encrypting = run.variant == "encrypted"
        encrypted_bytes = self._servers().datadir_bytes("plain")
        with proc.background(argv, phase="sysbench load", log=run.raw) as load:
            # Untimed: sysbench's threads connect and prepare their statements first.
            time.sleep(LOAD_RAMP_S)
            want = sysbench_tables(server)  # outside the window
            before = commits(server)
            with timed(self.device) as watch:
                if encrypting:
                    server.query("SET GLOBAL innodb_encrypt_tables = ON")
                    wait_tables(server, True, ENCRYPTION_TIMEOUT_S, want)
                else:
                    poll_tables(server, self.rule.foreground_s)
            transactions = commits(server) - before
            if load.poll() is not None or transactions <= 0:
                raise ToolError(
                    f"the foreground load ended or committed nothing ({transactions} commits)",
                    argv=argv,
                    returncode=load.returncode,
                    phase="encrypting existing data: foreground load",
                    tail=proc.tail(run.raw),
                )
        encrypted_now = table_states(server)[1]
        if encrypting:
            # Back to plain for the next round: outside the measured window.
            server.query("SET GLOBAL innodb_encrypt_tables = OFF")
            wait_tables(server, False, ENCRYPTION_TIMEOUT_S)
        return watch, {
            "time": 1000.0 * watch.seconds / transactions,
            "foreground_tps": transactions / watch.seconds,
            "foreground_transactions": transactions,
            "encryption_s": watch.seconds if encrypting else 0.0,
            "encrypted_bytes": encrypted_bytes if encrypting else 0,
            "tables_encrypted": encrypted_now,
        }

    def _key_rotation(self, server: SandboxServer, run: Run) -> tuple[Stopwatch, dict[str, Any]]:
        """As encrypting existing data, on the plain server with its tables encrypted under
        encbench_key_management at key version v (servers.py, ROTATABLE): the foreground load
        throughout; the rotating side's window runs from raising the plugin's version to
        v + VERSION_STEP until every table's oldest page has it and no tablespace is
        rotating, the other side's is foreground_s of the same load with the same polling."""
        d = self.profile.data
        argv = sysbench.command(
            server.endpoint(),
            FOREGROUND_SCRIPT,
            threads=self.rule.load_threads,
            time_s=int(ENCRYPTION_TIMEOUT_S),
            options=sysbench.oltp_options(d.tables, d.table_size),
        )
        rotating = run.variant == "encrypted"
        rotated_bytes = self._servers().datadir_bytes("plain")
        before_version = key_version(server, VERSION_VARIABLE)
        version = before_version + VERSION_STEP if rotating else before_version
        with proc.background(argv, phase="sysbench load", log=run.raw) as load:
            time.sleep(LOAD_RAMP_S)  # untimed, as for encrypting existing data
            want = sysbench_tables(server)
            before = commits(server)
            with timed(self.device) as watch:
                if rotating:
                    server.query(f"SET GLOBAL {VERSION_VARIABLE} = {int(version)}")
                    # Setting the age (to what it is) wakes InnoDB's encryption threads
                    # (fil_crypt_set_rotate_key_age), as a DBA would after a new key: without
                    # it they notice the new version at their next check, up to a second
                    # later, and the window would time their sleep.
                    server.query(f"SET GLOBAL innodb_encryption_rotate_key_age = {ROTATE_KEY_AGE}")
                    wait_key_version(server, version, ENCRYPTION_TIMEOUT_S, want)
                else:
                    poll_tables(server, self.rule.foreground_s, at_version(version))
            transactions = commits(server) - before
            if load.poll() is not None or transactions <= 0:
                raise ToolError(
                    f"the foreground load ended or committed nothing ({transactions} commits)",
                    argv=argv,
                    returncode=load.returncode,
                    phase="key rotation: foreground load",
                    tail=proc.tail(run.raw),
                )
        _, tables_at, _ = key_version_states(server, version)
        return watch, {
            "time": 1000.0 * watch.seconds / transactions,
            "foreground_tps": transactions / watch.seconds,
            "foreground_transactions": transactions,
            "encryption_s": watch.seconds if rotating else 0.0,
            "encrypted_bytes": rotated_bytes if rotating else 0,
            "key_version_from": before_version,
            "key_version": key_version(server, VERSION_VARIABLE),
            "tables_at_key_version": tables_at,
        }

    def _backup(
        self, server: SandboxServer, run: Run, *, prepare: bool
    ) -> tuple[Stopwatch, dict[str, Any]]:
        target = backup_dir(self.store, run.variant)
        shutil.rmtree(target, ignore_errors=True)
        tool = find_binary("mariadb-backup")
        backup = [
            tool,
            # The server's own option file: its key plugin's options come with it.
            f"--defaults-file={server.defaults_file}",
            "--backup",
            f"--target-dir={target}",
            f"--socket={server.paths.socket}",
            f"--user={server.user}",
        ]
        # The backup's own option file carries the key plugin's options (backup-my.cnf); no
        # system option file is read.
        prep = [
            tool,
            f"--defaults-file={target / 'backup-my.cnf'}",
            "--prepare",
            f"--target-dir={target}",
        ]
        try:
            if prepare:
                self._mariadb_backup(backup, run.raw.with_suffix(".backup.txt"))
                with timed(self.device) as watch:
                    self._mariadb_backup(prep, run.raw)
            else:
                with timed(self.device) as watch:
                    self._mariadb_backup(backup, run.raw)
            size = tree_bytes(target)
        finally:
            shutil.rmtree(target, ignore_errors=True)
        return watch, {"backup_bytes": size}

    @staticmethod
    def _mariadb_backup(argv: list[str], log: Path) -> None:
        proc.run(
            argv,
            phase=f"mariadb-backup {argv[2].removeprefix('--')}",
            timeout_s=BACKUP_TIMEOUT_S,
            stdout_path=log,
            hint=f"its output is in {log}",
        )

    def prove(self, record: OperationRecord) -> None:
        """Per run, the server's own account right after the operation: the encrypted side's
        tables are all encrypted and the plain side's none (for encrypting existing data: the
        encrypted run ended with every table encrypted, the plain run with none).  Key
        rotation: both sides end with every table encrypted, and with every page at the key
        version the plugin then hands out: the rotating run's VERSION_STEP above the one it
        began with, the other's unchanged."""
        where = f"{record.cell.label} round {record.round}: the {record.variant} run"
        if record.cell.operation == "key-rotation":
            prove_rotation(record, where)
            return
        want = record.tables if record.variant == "encrypted" else 0
        if record.tables <= 0 or record.tables_encrypted != want:
            raise ProofError(
                f"{where} left {record.tables_encrypted} of {record.tables} tables encrypted "
                f"(INNODB_TABLESPACES_ENCRYPTION); {record.variant} must leave {want}"
            )


def prove_rotation(record: OperationRecord, where: str) -> None:
    step = VERSION_STEP if record.variant == "encrypted" else 0
    problems = []
    if record.tables <= 0 or record.tables_encrypted != record.tables:
        problems.append(f"{record.tables_encrypted} of {record.tables} tables encrypted")
    if record.key_version != record.key_version_from + step:
        problems.append(
            f"key version {record.key_version_from} → {record.key_version}, not "
            f"{record.key_version_from + step}"
        )
    if record.tables_at_key_version != record.tables:
        problems.append(
            f"{record.tables_at_key_version} of {record.tables} tables wholly at key version "
            f"{record.key_version}"
        )
    if problems:
        raise ProofError(
            f"{where} left {'; '.join(problems)} (INNODB_TABLESPACES_ENCRYPTION); a "
            f"{'rotating' if step else 'non-rotating'} run must leave every table encrypted "
            f"with key version {record.key_version_from + step}"
        )
