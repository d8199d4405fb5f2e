"""The one way encbench runs external programs: no shell, output to files, a timeout, errors
that carry the command, the exit code, the phase and the tail of stderr.

Every child gets the ENCBENCH_OWNER marker in its environment and its own process group, so
that `encbench clean` and the interrupt path can find and stop exactly what encbench started.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from encbench.errors import ToolError

OWNER_ENV = "ENCBENCH_OWNER"


def which(name: str) -> str | None:
    """PATH lookup, plus the sbin directories that a non-root PATH often lacks (mariadbd)."""
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
    env[OWNER_ENV] = str(os.getpid())
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
    os.devnull while errors are kept).  On timeout the child's whole process group is killed."""
    argv = list(argv)
    out_file = open(stdout_path, "w") if stdout_path else None  # noqa: SIM115
    err_file = open(stderr_path, "w") if stderr_path else None  # noqa: SIM115
    error_log = stderr_path or stdout_path
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=out_file or subprocess.PIPE,
            stderr=err_file or subprocess.STDOUT,
            text=True,
            env=child_env(env),
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        for f in (out_file, err_file):
            if f:
                f.close()
        raise ToolError(f"{argv[0]} not found", argv=argv, phase=phase, hint=hint) from exc
    try:
        out, _ = proc.communicate(stdin_text, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        kill_group(proc.pid)
        proc.wait()
        raise ToolError(
            f"{os.path.basename(argv[0])} did not finish within {timeout_s:.0f} s",
            argv=argv,
            phase=phase,
            tail=tail(error_log) if error_log else "",
            hint=hint,
        ) from exc
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): the child must not outlive us.
        kill_group(proc.pid)
        proc.wait()
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


def stop_group(process: subprocess.Popen[Any], steps: Sequence[tuple[int | None, float]]) -> None:
    """Stop a child that leads its own process group, escalating: each step sends a signal
    to the group (None: send nothing, just wait, e.g. after a clean shutdown was asked for)
    and waits up to its timeout.  Whatever is left in the group is killed at the end, so
    helpers the child forked cannot outlive it.  Never raises."""
    for sig, wait_s in steps:
        if process.poll() is not None:
            break
        if sig is not None:
            kill_group(process.pid, sig)
        try:
            process.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    kill_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by pid (children are started as group leaders)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, from /proc (no polling inside a measured window)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def parse_proc_stat(text: str, ticks_per_s: float) -> tuple[float, float]:
    """(busy, steal) seconds summed over all CPUs from the `cpu` line of /proc/stat: user
    nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already in
    user, idle and iowait are not busy."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            v = [int(x) for x in fields[1:]] + [0] * 8
            busy = v[0] + v[1] + v[2] + v[5] + v[6]
            return busy / ticks_per_s, v[7] / ticks_per_s
    raise ValueError("no aggregate 'cpu' line in /proc/stat")


def machine_cpu_s() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine so far, all CPUs together."""
    return parse_proc_stat(Path("/proc/stat").read_text(), os.sysconf("SC_CLK_TCK"))


def _parents() -> dict[int, int]:
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    found[int(entry.name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return found


def descendants(pid: int) -> list[int]:
    """Live processes below pid, whatever group or session they moved to."""
    parent = _parents()
    found, frontier = [], {pid}
    while frontier:
        children = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found += sorted(children)
        frontier = children
    return found


def kill_pids(pids: Iterable[int], wait_s: float = 5.0) -> None:
    """SIGKILL each pid still alive and wait for it to go; never raises."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        wait_gone(pid, wait_s)


def tree_cpu_seconds(roots: Iterable[int]) -> float:
    """CPU of the given processes and all their live descendants (an sshd's session child),
    plus what their reaped children used: a daemon's whole cost, whatever it forks."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    wanted = set(roots)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        # utime stime cutime cstime: fields 14-17 of stat, 11-14 after the name.
        cpu[pid] = sum(int(x) for x in fields[11:15]) / tick
    total = 0.0
    for pid, value in cpu.items():
        ancestor, hops = pid, 0
        while ancestor not in wanted and ancestor in parent and hops < 64:
            ancestor, hops = parent[ancestor], hops + 1
        if ancestor in wanted:
            total += value
    return total


def orphans() -> list[tuple[int, str]]:
    """Processes encbench started (they carry its marker) whose encbench run is dead: what a
    run killed outright (SIGKILL) left behind, e.g. a tunnel or a delay relay."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        for item in environ:
            if item.startswith(f"{OWNER_ENV}=".encode()):
                value = item.split(b"=", 1)[1]
                owner = int(value) if value.isdigit() else 0
                if owner and owner != os.getpid() and not pid_alive(owner):
                    found.append((int(entry.name), cmdline))
                break
    return found


def stop_orphans() -> list[str]:
    """SIGTERM, then SIGKILL, each orphan by its pid; one line per process stopped."""
    actions = []
    for pid, cmdline in orphans():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
        if not wait_gone(pid, 5):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        actions.append(f"stopped pid {pid} left by a dead run: {cmdline[:80]}")
    return actions
