"""The one way encbench runs, watches and stops processes: no shell, output to files, a
timeout, errors that carry the command, the exit code, the phase and the tail of stderr; one
escalating stop for every child; and one reader of /proc (psutil, plus the per-namespace TCP
table that psutil does not read).

Every child gets the ENCBENCH_OWNER marker in its environment and its own process group, so
that `encbench clean` and the interrupt path can find and stop exactly what encbench started.
The marker names the run by its RunIdentity: a run id, the owning process's pid and that
process's start time, so that a pid recycled after a run died never passes for the run.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil

from encbench import state, stopping
from encbench.errors import EncbenchError, ToolError

OWNER_ENV = "ENCBENCH_OWNER"
_TCP_LISTEN = "0A"  # the state column of /proc/net/tcp for LISTEN


# -- who we are -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunIdentity:
    """One encbench run: its id (the results directory, once the CLI sets it), and its owning
    process's pid and start time in clock ticks since boot (field 22 of /proc/PID/stat), which
    together name one process for the whole uptime of the machine.  start_ticks is None in
    records written before identities existed: only the pid can be checked then."""

    run_id: str
    pid: int
    start_ticks: int | None

    def alive(self) -> bool:
        if self.start_ticks is None:
            return pid_alive(self.pid)
        return start_ticks(self.pid) == self.start_ticks

    def marker(self) -> str:
        return f"{self.pid}:{self.start_ticks}:{self.run_id}"

    @classmethod
    def from_marker(cls, value: str) -> RunIdentity | None:
        """Parse marker(); a bare pid is the marker of encbench before identities."""
        pid, _, rest = value.partition(":")
        ticks, _, run_id = rest.partition(":")
        if not pid.isdigit() or int(pid) <= 0:
            return None
        return cls(run_id, int(pid), int(ticks) if ticks.isdigit() else None)

    def __str__(self) -> str:
        return f"run {self.run_id} (pid {self.pid})" if self.run_id else f"run of pid {self.pid}"


def to_clean(owner: RunIdentity, include_live_runs: bool, only: RunIdentity | None) -> bool:
    """Whether a clean acts on a record that `owner` left: `encbench clean` on those of
    dead runs (of live ones too, include_live_runs); a command's own last net (only=its run)
    on exactly its own, live as it is."""
    if only is not None:
        return (owner.pid, owner.start_ticks) == (only.pid, only.start_ticks)
    return include_live_runs or not owner.alive()


_run_id = ""


def set_run_id(run_id: str) -> None:
    """Name this run (the CLI passes its results directory) before any child is started."""
    global _run_id
    _run_id = run_id


def current_run() -> RunIdentity:
    pid = os.getpid()
    return RunIdentity(_run_id, pid, start_ticks(pid))


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when it is gone or a
    zombie.  psutil gives it as boot time + ticks / CLK_TCK; both terms come from /proc and
    rounding back to ticks is exact."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        since_boot = process.create_time() - psutil.boot_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return round(since_boot * os.sysconf("SC_CLK_TCK"))


# -- running tools ----------------------------------------------------------------------------
def which(name: str) -> str | None:
    """PATH lookup, plus the sbin directories that a non-root PATH often lacks (where the
    database servers are)."""
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/sbin"):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env[OWNER_ENV] = current_run().marker()
    env.setdefault("LC_ALL", "C")
    if extra:
        env.update(extra)
    return env


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def log_size(path: Path) -> int:
    """Where a log ends now (0: not written yet): what `log_since` reads from later."""
    return path.stat().st_size if path.exists() else 0


def log_since(path: Path, offset: int) -> str:
    """What a log gained since it was `offset` bytes long (log_size)."""
    with open(path, errors="replace") as f:
        f.seek(offset)
        return f.read()


def run(
    argv: Sequence[str],
    *,
    phase: str,
    timeout_s: float,
    cwd: Path | None = None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    stdin_text: str | None = None,
    env: Mapping[str, str] | None = None,
    hint: str = "",
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run argv to completion.  Output goes to `stdout_path` when given (kept for the record),
    else is captured; stderr goes with it, or to `stderr_path` (so that stdout can be
    os.devnull while errors are kept).  On timeout the child's whole process group is
    stopped."""
    argv = list(argv)
    out_file = open(stdout_path, "w") if stdout_path else None  # noqa: SIM115
    err_file = open(stderr_path, "w") if stderr_path else None  # noqa: SIM115
    error_log = stderr_path or stdout_path
    try:
        proc = _start(
            argv,
            phase=phase,
            hint=hint,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=out_file or subprocess.PIPE,
            stderr=err_file or subprocess.STDOUT,
        )
        try:
            out, _ = proc.communicate(stdin_text, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            stop_group(proc, TOOL_STOP)
            raise _overran(argv, timeout_s, phase, error_log, hint) from exc
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the child must not outlive us.
            stop_group(proc, TOOL_STOP)
            raise
    finally:
        for f in (out_file, err_file):
            if f:
                f.close()
    text = (
        out if out is not None else (stdout_path.read_text(errors="replace") if stdout_path else "")
    )
    if check and proc.returncode != 0:
        raise ToolError(
            f"{os.path.basename(argv[0])} failed",
            argv=argv,
            returncode=proc.returncode,
            phase=phase,
            tail=tail(stderr_path) if stderr_path else "\n".join(text.splitlines()[-15:]),
            hint=hint,
        )
    return subprocess.CompletedProcess(argv, proc.returncode, text, "")


@dataclass(frozen=True)
class Command:
    """One command of run_together: its output (stdout and stderr) goes to `log`."""

    argv: Sequence[str]
    phase: str
    timeout_s: float
    log: Path
    env: Mapping[str, str] | None = None
    cwd: Path | None = None


def run_together(
    commands: Sequence[Command], hint: str = ""
) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once, then wait for all of them: the two clients of a duet
    round.  On a timeout, an interrupt or a command that cannot start, every child started so
    far has its process group stopped before the error is raised.  Returns each command's
    output (read from its log) and exit status, in order; the caller judges the status."""
    started: list[subprocess.Popen[str]] = []
    try:
        for c in commands:
            started.append(spawn(c.argv, phase=c.phase, log=c.log, hint=hint, env=c.env, cwd=c.cwd))
        begun = time.monotonic()
        for command, process in zip(commands, started, strict=True):
            left = max(0.0, command.timeout_s - (time.monotonic() - begun))
            try:
                process.wait(timeout=left)
            except subprocess.TimeoutExpired as exc:
                raise _overran(
                    list(command.argv), command.timeout_s, command.phase, command.log, hint
                ) from exc
    except BaseException:
        _stop_all(started)
        raise
    return [
        subprocess.CompletedProcess(
            list(c.argv), p.returncode, c.log.read_text(errors="replace"), ""
        )
        for c, p in zip(commands, started, strict=True)
    ]


def spawn(
    argv: Sequence[str],
    *,
    phase: str,
    log: Path,
    hint: str = "",
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[str]:
    """Start argv and return at once; its output (stdout and stderr) goes to `log`.  The
    caller stops it (stop_group) on every exit."""
    with open(log, "w") as out:
        return _start(
            list(argv), phase=phase, hint=hint, cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip


@contextlib.contextmanager
def background(argv: Sequence[str], *, phase: str, log: Path) -> Iterator[subprocess.Popen[str]]:
    """argv running beside the body (a load during an operation), stopped on any exit."""
    process = spawn(argv, phase=phase, log=log)
    try:
        yield process
    finally:
        stop_group(process, TOOL_STOP)


def start_streams(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen[bytes]:
    """Start argv with byte streams the caller wires (a server, a tunnel, a stage of a
    pipeline, an ssh shell it talks to) and return at once; like every child, in its own
    session and with the run's marker.  The caller waits for it or stops it (stop_group) on
    every exit.  A missing program raises FileNotFoundError: the caller knows what to say."""
    stopping.check()
    process: subprocess.Popen[bytes] = _born(
        lambda: subprocess.Popen(list(argv), env=child_env(env), start_new_session=True, **popen)
    )
    return process


# Every child started and not yet seen to end: what stop_children stops if a stop came at a
# moment when no one else owned it (between its start and its owner's `try`).  Children are
# started from worker threads too (a state transfer's pipeline): hence the lock.
_children: set[subprocess.Popen[Any]] = set()
_children_lock = threading.Lock()


def _born(start: Callable[[], subprocess.Popen[Any]]) -> subprocess.Popen[Any]:
    """Start a child with stop signals held, and record it: a stop that came meanwhile is
    raised only once the child is known, and stops it before it goes up."""
    process: subprocess.Popen[Any] | None = None
    try:
        with stopping.held():
            process = start()
            with _children_lock:
                _children.difference_update([p for p in _children if p.returncode is not None])
                _children.add(process)
    except BaseException:
        if process is not None:
            stop_group(process, TOOL_STOP)
        raise
    return process


def children() -> frozenset[subprocess.Popen[Any]]:
    """The children started so far and not yet seen to end (for stop_children's `besides`)."""
    with _children_lock:
        return frozenset(_children)


@stopping.whole
def _stop_all(processes: Sequence[subprocess.Popen[Any]]) -> None:
    """Every one stopped, even if a stop comes after the first."""
    for process in processes:
        stop_group(process, TOOL_STOP)


@stopping.whole
def stop_children(besides: frozenset[subprocess.Popen[Any]] = frozenset()) -> list[str]:
    """Stop (group and all) every child of this process still running but those `besides`
    (what a test's process had started before the command): at the end of a command, after
    its clean-up, the last net under it.  One line per child stopped: none where the
    clean-up did its work."""
    with _children_lock:
        mine = [p for p in _children if p not in besides]
    stopped = []
    for process in mine:
        if process.returncode is None and process.poll() is None:
            stop_group(process, TOOL_STOP)
            argv = process.args if isinstance(process.args, list) else [process.args]
            stopped.append(f"stopped pid {process.pid} ({os.path.basename(str(argv[0]))})")
        with _children_lock:
            _children.discard(process)
    return stopped


def _start(argv: list[str], *, phase: str, hint: str, **popen: Any) -> subprocess.Popen[str]:
    """A child in its own session (a timeout or interrupt stops its whole group, never ours),
    with the run's environment.  A run that was asked to stop starts nothing more."""
    env = popen.pop("env", None)
    stopping.check()
    try:
        return _born(
            lambda: subprocess.Popen(
                argv, text=True, env=child_env(env), start_new_session=True, **popen
            )
        )
    except FileNotFoundError as exc:
        raise ToolError(f"{argv[0]} not found", argv=argv, phase=phase, hint=hint) from exc


def _overran(
    argv: list[str], timeout_s: float, phase: str, log: Path | None, hint: str
) -> ToolError:
    return ToolError(
        f"{os.path.basename(argv[0])} did not finish within {timeout_s:.0f} s",
        argv=argv,
        phase=phase,
        tail=tail(log) if log else "",
        hint=hint,
    )


# -- stopping ---------------------------------------------------------------------------------
# A tool that overran or was interrupted gets a moment to exit cleanly, then SIGKILL.
TOOL_STOP: tuple[tuple[int | None, float], ...] = ((signal.SIGTERM, 2.0),)


def _gone_within(process: subprocess.Popen[Any] | psutil.Process, wait_s: float) -> bool:
    if isinstance(process, subprocess.Popen):
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    # Not our child: poll, and take a zombie (its parent may never reap it) or a pid now used
    # by another process (psutil compares the start time) as gone.
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _signal(process: subprocess.Popen[Any] | psutil.Process, sig: int, group: bool) -> None:
    if isinstance(process, psutil.Process):
        with contextlib.suppress(psutil.Error):
            if not process.is_running():
                return
    if group:
        kill_group(process.pid, sig)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, sig)


@stopping.whole
def stop_group(
    process: subprocess.Popen[Any] | psutil.Process,
    steps: Sequence[tuple[int | None, float]],
    *,
    group: bool = True,
    gone: Callable[[float], bool] | None = None,
) -> None:
    """Stop a process that leads its own process group, escalating: each step sends a signal
    to the group (None: send nothing, just wait, e.g. after a clean shutdown was asked for)
    and waits up to its timeout.  Whatever is left in the group is killed at the end, so
    helpers the process forked cannot outlive it.  `process` is our child (Popen) or, for
    `encbench clean`, a process a dead run left (psutil.Process, which refuses a recycled
    pid); group=False signals that one process only.  `gone(seconds)` waits for it where
    another thread reaps it (to read its CPU as it exits: a wait here would race that thread
    for the exit, and winning, lose the CPU).  Stop signals are held until the stop is over:
    a second Ctrl-C must not cut it short before its SIGKILL.  Raises nothing but the
    Interrupted of a stop asked for meanwhile (encbench/stopping.py), once it is done."""
    wait = gone or (lambda seconds: _gone_within(process, seconds))
    for sig, wait_s in steps:
        if sig is not None:
            _signal(process, sig, group)
        if wait(wait_s):
            break
    _signal(process, signal.SIGKILL, group)
    wait(10)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by pid (children are started as group leaders)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def kill_pids(pids: Iterable[int], wait_s: float = 5.0) -> None:
    """SIGKILL each pid still alive and wait for it to go; never raises."""
    pids = list(pids)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        wait_gone(pid, wait_s)


# -- reading /proc ----------------------------------------------------------------------------
def pid_alive(pid: int) -> bool:
    """Whether pid names a live process; a zombie is dead for our purposes."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (one read of /proc/PID/stat: cheap enough to take just
    before and after a measured window, never inside it)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def cpus_allowed(pid: int) -> str:
    """The CPUs a process may run on as /proc/PID/status lists them ("0", "0-1"): what its
    cpuset and affinity together allow, read from the kernel, not from what was asked."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "Cpus_allowed_list":
            return value.strip()
    return ""


class _CpuTimes(Protocol):
    @property
    def user(self) -> float: ...
    @property
    def nice(self) -> float: ...
    @property
    def system(self) -> float: ...
    @property
    def irq(self) -> float: ...
    @property
    def softirq(self) -> float: ...
    @property
    def steal(self) -> float: ...


def busy_and_steal(times: _CpuTimes) -> tuple[float, float]:
    """(busy, steal) seconds from machine-wide CPU times, where busy is the time processes
    ran: guest time is already in user; idle and iowait are not busy; and interrupt time
    (irq, softirq) is left out because it is charged to no process, and on this kind of
    machine it mostly serves the measuring run's own disk and network I/O — an io-bound
    cell at 64 threads spent 11% of the machine there, which would otherwise read as other
    processes' load (README, Interference)."""
    busy = times.user + times.nice + times.system
    return busy, times.steal


def machine_cpu_s() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine so far, all CPUs together."""
    return busy_and_steal(psutil.cpu_times())


KTHREADD = 2  # the kernel's thread daemon: every kernel thread is its child


def kernel_threads_cpu_s() -> float:
    """CPU so far of every kernel thread (kthreadd's children: the workqueues' kworkers, the
    loop devices' workers, ksoftirqd): where the kernel does I/O work on a process's behalf —
    fscrypt's decryption of what a read brought in, a loop device's I/O — outside that
    process and its cgroup."""
    total = 0.0
    for process in psutil.process_iter(["ppid", "cpu_times"]):
        info = process.info
        if info["ppid"] == KTHREADD and info["cpu_times"] is not None:
            total += info["cpu_times"].user + info["cpu_times"].system
    return total


def descendants(pid: int) -> list[int]:
    """Live processes below pid, whatever group or session they moved to."""
    try:
        return sorted(child.pid for child in psutil.Process(pid).children(recursive=True))
    except psutil.NoSuchProcess:
        return []


def processes_cpu_s(pids: Iterable[int]) -> dict[int, float]:
    """CPU so far (own and reaped children's) of each of these processes still alive: a
    handful of /proc reads, cheap enough around every measured window."""
    found = {}
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found[pid] = t.user + t.system + t.children_user + t.children_system
    return found


def tree_cpu_seconds(roots: Iterable[int]) -> float:
    """CPU of the given processes and all their live descendants (an sshd's session child),
    plus what their reaped children used: a daemon's whole cost, whatever it forks."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for process in psutil.process_iter(["ppid", "cpu_times"]):
        times = process.info["cpu_times"]
        if times is None or process.info["ppid"] is None:
            continue  # gone, or not ours to read
        parent[process.pid] = process.info["ppid"]
        cpu[process.pid] = times.user + times.system + times.children_user + times.children_system
    wanted = set(roots)
    total = 0.0
    for pid, value in cpu.items():
        ancestor, hops = pid, 0
        while ancestor not in wanted and ancestor in parent and hops < 64:
            ancestor, hops = parent[ancestor], hops + 1
        if ancestor in wanted:
            total += value
    return total


def listening(pid: int, port: int) -> bool:
    """Whether a TCP socket in pid's network namespace listens on `port`.  Read from
    /proc/PID/net/tcp by hand: psutil reads /proc/net/tcp, the table of the namespace encbench
    itself is in, and so cannot see a daemon started inside another namespace."""
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == _TCP_LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def owner_of(environ: Mapping[str, str] | None) -> RunIdentity | None:
    """The run named by a process environment's marker, if it has one."""
    value = (environ or {}).get(OWNER_ENV)
    return RunIdentity.from_marker(value) if value else None


def orphans() -> list[tuple[psutil.Process, str]]:
    """Processes encbench started (they carry its marker) whose run is gone: what a run killed
    outright (SIGKILL) left behind, e.g. a tunnel or a delay relay.  A run counts as alive
    only while its pid still has the start time the marker names.  Only the runs of this
    state (XDG_STATE_HOME, as the process's environment names it) are ours to end, as its
    sandboxes and cgroups are: another user's `encbench clean`, or another test's, never
    ends them."""
    ours = state.base()
    found = []
    for process in psutil.process_iter(["environ", "cmdline", "status"]):
        environ = process.info["environ"]
        owner = owner_of(environ)
        if owner is None or process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if state.base(environ) != ours:
            continue
        if owner.alive():
            continue
        found.append((process, " ".join(process.info["cmdline"] or [])))
    return found


ORPHAN_STOP: tuple[tuple[int | None, float], ...] = ((signal.SIGTERM, 5.0),)


def stop_orphans() -> list[str]:
    """SIGTERM, then SIGKILL, each orphan by its pid; one line per process stopped."""
    actions = []
    for process, cmdline in orphans():
        stop_group(process, ORPHAN_STOP, group=False)
        actions.append(f"stopped pid {process.pid} left by a dead run: {cmdline[:80]}")
    return actions


def tool_version(argv: list[str], pattern: str = r"(.+)") -> str | None:
    """A tool's version as it prints it (the pattern's first group), None where the tool is
    missing or fails."""
    if shutil.which(argv[0]) is None and not Path(argv[0]).exists():
        return None
    try:
        out = run(argv, phase=f"{argv[0]} version", timeout_s=30, check=False).stdout
    except EncbenchError:
        return None
    match = re.search(pattern, out)
    return match[1].strip() if match else out.strip().splitlines()[0] if out.strip() else None
