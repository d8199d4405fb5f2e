"""The seed's raw pipelines (issue #10 item 3), without Galera, to isolate the transfer: the
donor's data directory streamed over socat from the donor's host (namespace) to an empty
directory on the joiner's, plain or through socat's openssl address with the run's
certificate and the cell's cipher — the same socat options the SST cells give
wsrep_sst_mariabackup (cluster.sockopt), and socat's buffer (`-b`) from the profile.

    tar:      (donor) tar -c | socat  →  socat | tar -x (joiner)
              of the donor's data directory with the donor node stopped, as the seed did:
              a running server's files change while tar reads them.
    xbstream: (donor) mariadb-backup --backup --stream=xbstream --parallel=N | socat
              →  socat | mbstream -x (joiner)
              of the running (idle) donor, as an SST's backup is taken.
    rsync-dir, rsync-file: pipeline_rsync.py.

One run, timed from the sender's start to the receiver's exit with every byte written and
the target directory's filesystem synced (`sync -f`): untimed before it, the target is
emptied, the page cache dropped (`echo 3 > /proc/sys/vm/drop_caches`, machine-wide, as root;
the seed did the same) and the receiver started and listening.  Each process is waited for
by its own thread (wait4): its exit time and CPU (the sender's processes are the donor's
CPU, the receiver's the joiner's) without a polling loop.  socat runs with -d -d, so its own
log names the TLS protocol and suite it negotiated: the per-run proof.

No shell: the processes of each end are joined by pipes here, each in its own process group
with the run's environment marker (proc.child_env), so `encbench clean` finds any a killed
run left."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from encbench import proc, stopping
from encbench.errors import ToolError
from encbench.servers.mariadb.installs import find_binary
from encbench.studies.state_transfer.records import SstCell

PORT = 4444  # the SST port: the wire proof's verdict reads this conversation
LISTEN_TIMEOUT_S = 30.0
JOIN_POLL_S = 0.05  # how often the main thread looks for a failed process (not a timing)
STOP = ((signal.SIGTERM, 5.0),)
SYNC_TIMEOUT_S = 600
DROP_CACHES = Path("/proc/sys/vm/drop_caches")
SENDER_STAGE = "pipeline: sender done"
RECEIVER_STAGE = "pipeline: receiver done"
SYNC_STAGE = "pipeline: sync -f of the target"
TLS_LINE = "SSL connection using "
PROTOCOL_LINE = "SSL proto version used: "
PLAIN_LINE = "starting data transfer loop"


@dataclass(frozen=True)
class Ends:
    """Where the two ends run and what the encrypted one authenticates with."""

    donor_prefix: Sequence[str]  # netns.exec_prefix of the donor's namespace
    joiner_prefix: Sequence[str]
    joiner_addr: str
    cert: Path  # the listening end's (the joiner's): the run's server certificate
    key: Path
    ca: Path
    client_cert: Path  # the connecting end's: a server certificate is not a client's
    client_key: Path
    buffer_kib: int
    # Where the rsync pipelines' many rsyncs start on the donor (netns.net_prefix): no mount
    # namespace each; empty, as donor_prefix.
    donor_net_prefix: Sequence[str] = ()

    def tls(self, *, connect: bool, sockopt: str) -> str:
        cert, key = (self.client_cert, self.client_key) if connect else (self.cert, self.key)
        return f"cert={cert},key={key},cafile={self.ca}{sockopt}"


def socat_argv(ends: Ends, *, send: bool, encrypted: bool, sockopt: str) -> list[str]:
    """socat of one end, unidirectional (-u), its buffer from the profile; encrypted, both
    ends present the run's certificates (the joiner its server certificate, which names its
    address; the donor the client one) and verify the other's against the run's CA."""
    base = ["socat", "-u", "-b", str(ends.buffer_kib * 1024), "-d", "-d"]
    if send:
        if encrypted:
            tls = ends.tls(connect=True, sockopt=sockopt)
            far = f"OPENSSL-CONNECT:{ends.joiner_addr}:{PORT},{tls}"
        else:
            far = f"TCP:{ends.joiner_addr}:{PORT}"
        return [*base, "STDIN", far]
    bind = f"{PORT},reuseaddr,bind={ends.joiner_addr}"
    tls = ends.tls(connect=False, sockopt=sockopt)
    near = f"OPENSSL-LISTEN:{bind},{tls}" if encrypted else f"TCP-LISTEN:{bind}"
    return [*base, near, "STDOUT"]


def sender_tool(cell: SstCell, datadir: Path, backup: BackupSource) -> list[str]:
    if cell.method == "tar":
        return ["tar", "-c", "-f", "-", "-C", str(datadir), "."]
    return [
        find_binary("mariadb-backup"),
        # The node's own option file (first, as mariadb-backup requires): its data directory
        # and InnoDB settings.
        f"--defaults-file={backup.defaults_file}",
        "--backup",
        "--stream=xbstream",
        f"--parallel={cell.backup_threads}",
        f"--target-dir={backup.work_dir}",
        f"--socket={backup.socket}",
        f"--user={backup.user}",
    ]


def receiver_tool(cell: SstCell, target: Path) -> list[str]:
    if cell.method == "tar":
        return ["tar", "-x", "-f", "-", "-C", str(target)]
    return ["mbstream", "-x", "-C", str(target)]


@dataclass(frozen=True)
class BackupSource:
    """What mariadb-backup needs of the running donor (xbstream only)."""

    defaults_file: Path
    socket: Path
    user: str
    work_dir: Path  # its --target-dir: a stream writes only its own small files there


@dataclass(frozen=True)
class Exit:
    code: int
    at: float  # time.perf_counter() when it was reaped
    cpu_s: float  # user + system, its reaped children's included (wait4)


def _joined(thread: threading.Thread, timeout_s: float) -> bool:
    """Whether the thread ended within `timeout_s`."""
    thread.join(timeout=timeout_s)
    return not thread.is_alive()


class Chain:
    """Processes joined stdout → stdin, each in its own session; a thread per process waits
    for it (wait4) and notes when it ended and what CPU it used."""

    def __init__(
        self,
        argvs: Sequence[Sequence[str]],
        logs: Sequence[Path],
        phase: str,
        exited: threading.Event | None = None,
    ) -> None:
        self.argvs = [list(a) for a in argvs]
        self.logs = list(logs)
        self.phase = phase
        self.processes: list[subprocess.Popen[bytes]] = []
        self.exits: dict[int, Exit] = {}
        self._threads: list[threading.Thread] = []
        self._exited = exited  # set at each exit: a pool waits on it instead of polling

    def start(self) -> None:
        upstream: Any = subprocess.DEVNULL
        last = len(self.argvs) - 1
        for i, (argv, log) in enumerate(zip(self.argvs, self.logs, strict=True)):
            with open(log, "wb") as err:
                try:
                    process = proc.start_streams(
                        argv,
                        stdin=upstream,
                        stdout=subprocess.PIPE if i < last else subprocess.DEVNULL,
                        stderr=err,
                    )
                except FileNotFoundError as exc:
                    raise ToolError(f"{argv[0]} not found", argv=argv, phase=self.phase) from exc
            if upstream is not subprocess.DEVNULL:
                upstream.close()  # the next process holds the only read end
            upstream = process.stdout
            self.processes.append(process)
            thread = threading.Thread(target=self._reap, args=(i, process), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _reap(self, index: int, process: subprocess.Popen[bytes]) -> None:
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except ChildProcessError:
            return  # reaped by a stop on the error path
        code = os.waitstatus_to_exitcode(status)
        self.exits[index] = Exit(code, time.perf_counter(), usage.ru_utime + usage.ru_stime)
        process.returncode = code
        if self._exited is not None:
            self._exited.set()

    @property
    def done(self) -> bool:
        return len(self.exits) == len(self.processes)

    def failed(self) -> int | None:
        """The index of a process that exited with an error, if any."""
        return next((i for i, e in sorted(self.exits.items()) if e.code != 0), None)

    def error(self, index: int) -> ToolError:
        return ToolError(
            f"{Path(self.argvs[index][0]).name} exited with {self.exits[index].code}",
            argv=self.argvs[index],
            returncode=self.exits[index].code,
            phase=self.phase,
            tail=proc.tail(self.logs[index]),
            hint=f"its log: {self.logs[index]}",
        )

    @stopping.whole
    def stop(self) -> None:
        for i, process in enumerate(self.processes):
            if process.returncode is not None:  # reaped by its thread
                continue
            # Its thread reaps it, and so reads its CPU: waited for here, not reaped.  One
            # whose thread a signal kept from starting (Ctrl-C inside start()) is reaped here.
            thread = self._threads[i] if i < len(self._threads) else None
            proc.stop_group(process, STOP, gone=partial(_joined, thread) if thread else None)
        for thread in self._threads:
            thread.join(timeout=5)

    @property
    def cpu_s(self) -> float:
        return sum(e.cpu_s for e in self.exits.values())

    @property
    def ended_at(self) -> float:
        return max(e.at for e in self.exits.values())


def wait_both(sender: Chain, receiver: Chain, timeout_s: float) -> None:
    """Until every process of both ends has exited; raises at the first that failed or at
    the timeout (the caller stops both)."""
    deadline = time.monotonic() + timeout_s
    while not (sender.done and receiver.done):
        for chain in (sender, receiver):
            bad = chain.failed()
            if bad is not None:
                raise chain.error(bad)
        if time.monotonic() > deadline:
            raise ToolError(
                f"the pipeline did not finish within {timeout_s:.0f} s",
                phase=sender.phase,
                hint=f"its logs: {sender.logs[0].parent}",
            )
        time.sleep(JOIN_POLL_S)
    for chain in (sender, receiver):
        bad = chain.failed()
        if bad is not None:
            raise chain.error(bad)


def wait_listening(receiver: Chain, port: int = PORT) -> None:
    """The chain's first process listens on `port` (read in its own namespace)."""
    listener = receiver.processes[0]
    deadline = time.monotonic() + LISTEN_TIMEOUT_S
    while not proc.listening(listener.pid, port):
        # Exited, as its own thread saw it (a poll here could reap it first, its exit and
        # CPU then never recorded, and error() would have no exit to name).
        if receiver.failed() is not None or 0 in receiver.exits:
            bad = receiver.failed()
            raise receiver.error(bad if bad is not None else 0)
        if time.monotonic() > deadline:
            raise ToolError(
                f"{Path(receiver.argvs[0][0]).name} did not listen on port {port} within "
                f"{LISTEN_TIMEOUT_S:.0f} s",
                argv=receiver.argvs[0],
                phase=receiver.phase,
                tail=proc.tail(receiver.logs[0]),
            )
        time.sleep(0.01)


def drop_page_cache() -> str:
    """Untimed, before each run, as the seed did: the donor's files are then read from the
    disk, not from memory.  Machine-wide.  Returns what was done, for the record."""
    if os.geteuid() != 0:
        return "not dropped (not root)"
    os.sync()
    try:
        DROP_CACHES.write_text("3\n")
    except OSError as exc:
        return f"not dropped ({DROP_CACHES}: {exc.strerror})"
    return "dropped before each run (sync; echo 3 > /proc/sys/vm/drop_caches)"


def transport(log_text: str) -> str:
    """How socat's own log (-d -d) says it carried the stream; "" when it carried nothing."""
    if TLS_LINE in log_text:
        return "socat openssl"
    if PLAIN_LINE in log_text:
        return "socat plain"
    return ""


def negotiated(log_text: str) -> tuple[str, str]:
    """(protocol, suite) from socat's log; empty for a plain stream."""
    protocol = suite = ""
    for line in log_text.splitlines():
        if PROTOCOL_LINE in line:
            protocol = line.split(PROTOCOL_LINE, 1)[1].strip()
        if TLS_LINE in line:
            suite = line.split(TLS_LINE, 1)[1].strip()
    return protocol, suite


def empty_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)


@dataclass(frozen=True)
class Run:
    """One pipeline transfer's own parts, set up by the study."""

    cell: SstCell
    encrypted: bool
    sockopt: str
    ends: Ends
    datadir: Path  # the donor's
    backup: BackupSource
    target: Path  # the empty directory on the joiner's host
    logs: Path  # a prefix: LOGS.sender-tar.log, …
    timeout_s: float


@dataclass(frozen=True)
class Timed:
    sync_s: float  # sender's start → every byte written and synced
    transfer_s: float  # sender's start → the receiver's exit
    stages: dict[str, float]
    donor_cpu_s: float
    joiner_cpu_s: float
    donor_transport: str
    joiner_transport: str
    protocol: str
    cipher: str
    page_cache: str  # what drop_page_cache did before the run
    logs: tuple[Path, ...]


def log_path(prefix: Path, name: str) -> Path:
    return prefix.with_name(f"{prefix.name}.{name}.log")


class Prepared(Protocol):
    """A pipeline run set up (untimed); measure() times it, stop() ends every process on
    any exit (it never raises)."""

    def measure(self) -> Timed: ...

    def stop(self) -> None: ...


class Stream:
    """tar or xbstream: one sender chain, one receiver chain."""

    def __init__(self, run: Run) -> None:
        self.run = run
        empty_dir(run.target)
        if run.cell.method == "xbstream":
            empty_dir(run.backup.work_dir)
        phase = f"pipeline {run.cell.method}"
        recv = socat_argv(run.ends, send=False, encrypted=run.encrypted, sockopt=run.sockopt)
        send = socat_argv(run.ends, send=True, encrypted=run.encrypted, sockopt=run.sockopt)
        self.receiver = Chain(
            [
                [*run.ends.joiner_prefix, *recv],
                [*run.ends.joiner_prefix, *receiver_tool(run.cell, run.target)],
            ],
            [
                log_path(run.logs, "receiver-socat"),
                log_path(run.logs, f"receiver-{run.cell.method}"),
            ],
            phase,
        )
        self.sender = Chain(
            [
                [*run.ends.donor_prefix, *sender_tool(run.cell, run.datadir, run.backup)],
                [*run.ends.donor_prefix, *send],
            ],
            [log_path(run.logs, f"sender-{run.cell.method}"), log_path(run.logs, "sender-socat")],
            phase,
        )
        self.page_cache = drop_page_cache()
        try:
            self.receiver.start()
            wait_listening(self.receiver)
        except BaseException:
            self.stop()
            raise

    def measure(self) -> Timed:
        run, sender, receiver = self.run, self.sender, self.receiver
        try:
            began = time.perf_counter()
            sender.start()
            wait_both(sender, receiver, run.timeout_s)
            received = receiver.ended_at
            proc.run(
                ["sync", "-f", str(run.target)], phase="sync the target", timeout_s=SYNC_TIMEOUT_S
            )
            synced = time.perf_counter()
        finally:
            self.stop()
        sent_log = sender.logs[1].read_text(errors="replace")
        got_log = receiver.logs[0].read_text(errors="replace")
        protocol, cipher = negotiated(got_log)
        return Timed(
            sync_s=synced - began,
            transfer_s=received - began,
            stages={
                SENDER_STAGE: sender.ended_at - began,
                RECEIVER_STAGE: received - began,
                SYNC_STAGE: synced - received,
            },
            donor_cpu_s=sender.cpu_s,
            joiner_cpu_s=receiver.cpu_s,
            donor_transport=transport(sent_log),
            joiner_transport=transport(got_log),
            protocol=protocol,
            cipher=cipher,
            page_cache=self.page_cache,
            logs=(*sender.logs, *receiver.logs),
        )

    @stopping.whole
    def stop(self) -> None:
        self.sender.stop()
        self.receiver.stop()


def check_copied(target: Path, database: str, table: str) -> None:
    """The joiner's directory holds the donor's marker table after the transfer: its .ibd,
    or for xbstream its .new — mariadb-backup streams a table created since the donor's last
    checkpoint (as the marker is, just after the data is loaded) under that name, which its
    --prepare renames."""
    for suffix in (".ibd", ".new"):
        found = target / database / f"{table}{suffix}"
        if found.is_file() and found.stat().st_size > 0:
            return
    where = target / database if (target / database).is_dir() else target
    held = sorted(str(p.relative_to(target)) for p in where.rglob("*"))[:8]
    raise ToolError(
        f"the pipeline's target has no {database}/{table}.ibd after its transfer (it holds "
        f"{', '.join(held) or 'nothing'}{', …' if len(held) == 8 else ''})",
        phase="pipeline",
        hint=f"see the logs beside {target}",
    )
