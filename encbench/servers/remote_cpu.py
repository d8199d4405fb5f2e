"""A user's server's CPU, read on its own host over SSH where the user allows it
(`[target] ssh = "user@host"`, optionally `ssh_config` for `ssh -F`).

One `ssh -T DEST sh` stays open for the whole study, and each reading is one line written to
that shell (`cat /proc/PID/stat`) and its answer read back: no new connection, key exchange
or process start per reading, so a reading costs the server's host one `cat` and the
harness a few hundred bytes over an open channel.  BatchMode=yes: ssh never prompts (a key
or agent must already let the user in); a host key it does not know is refused.

Which process: the server names its own pid file (MariaDB's: servers/mariadb/ssh_cpu.py),
which is read over the same shell, and the process must be one its kind names
(`ServerKind.server_processes`, /proc/PID/comm): another process reusing a stale pid is not
taken for the server.  utime + stime of /proc/PID/stat,
in the host's own clock ticks (`getconf CLK_TCK` there), as the local ProcStatCounter reads
a sandbox without a cgroup; the window is read before and after the whole client run (a
remote file cannot be read from inside sysbench, as window.lua reads a local one), so it
includes the clients' connects.

If the ssh process ends (the parent died: its stdin closes), the remote shell ends with it.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import subprocess
import time
from pathlib import Path
from typing import Protocol

from encbench import proc
from encbench.errors import BadInput, EncbenchError
from encbench.servers import cgroup, server_kind
from encbench.servers.kind import ServerKind
from encbench.servers.target import MISSING

SOURCE = "ssh /proc/PID/stat"
WINDOW = "client run (read over ssh before and after)"
ANSWER_TIMEOUT_S = 15.0
# The first answer waits for the login too: ssh's connect, and the login shell's rc files.
LOGIN_TIMEOUT_S = 60.0
END = "encbench-end-of-answer"
SSH_HINT = "install it: apt-get install openssh-client"


class SshAccess(Protocol):
    """What reading the server's CPU over ssh needs of the profile's target (its TargetSpec):
    said here so that servers/ does not import the profile above it."""

    @property
    def ssh(self) -> str: ...

    @property
    def ssh_config(self) -> str: ...


class SshCpu:
    """The server's CPU seconds, read over one open ssh connection (module doc)."""

    source = SOURCE

    def __init__(
        self, destination: str, config: str, log: Path, kind: ServerKind | None = None
    ) -> None:
        """`kind`: the server's (a target without one is the first kind's, as its DSN is)."""
        self.destination = destination
        self.config = config
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self.ticks_per_s = 100
        self.server_processes = (kind or server_kind.kinds()[0]).server_processes

    def argv(self) -> list[str]:
        ssh = proc.which("ssh") or "ssh"
        argv = [ssh, "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
        argv += ["-o", "ServerAliveInterval=15"]
        if self.config:
            argv += ["-F", self.config]
        # "--": a destination is never taken for an option.
        return [*argv, "--", self.destination, "sh"]

    def open(self, pid_file: str) -> None:
        """Connect, and find the server's process from its pid file."""
        with open(self.log, "wb") as err:
            try:
                self.process = proc.start_streams(
                    self.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
                )
            except FileNotFoundError:
                raise BadInput(f"ssh not found: {SSH_HINT}") from None
        self.ticks_per_s = int(self.ask("getconf CLK_TCK", LOGIN_TIMEOUT_S))
        pid = self.ask(f"cat {shlex.quote(pid_file)}")
        if not pid.isdigit():
            raise BadInput(
                f"ssh {self.destination}: the server's pid file {pid_file} gave {pid!r}: is "
                "this the server's host? ([target] ssh names it)"
            )
        name = self.ask(f"cat /proc/{pid}/comm")
        if name not in self.server_processes:
            raise BadInput(
                f"ssh {self.destination}: pid {pid} from {pid_file} is {name!r}, not "
                f"{' or '.join(self.server_processes)}: is this the server's host?"
            )
        self.pid = int(pid)

    def ask(self, command: str, timeout_s: float = ANSWER_TIMEOUT_S) -> str:
        """One command's output (stripped), through the open shell; BadInput naming ssh's
        own error when the connection is refused or lost."""
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(f"{command} 2>&1; echo {END} $?\n".encode())
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._lost() from None
        data = b""
        deadline = time.monotonic() + timeout_s
        fd = process.stdout.fileno()
        while END.encode() not in data or not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise EncbenchError(f"ssh {self.destination}: no answer to {command!r} in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise self._lost()
            data += chunk
        text, _, status = data.decode(errors="replace").rpartition(END)
        if status.strip() != "0":
            raise BadInput(f"ssh {self.destination}: {command!r} failed: {text.strip()[-200:]}")
        return text.strip()

    def _lost(self) -> BadInput:
        why = " | ".join(proc.tail(self.log).strip().splitlines()[-2:]) or "it ended"
        return BadInput(
            f"ssh {self.destination} for the server's CPU failed: {why}; check that `ssh -o "
            f"BatchMode=yes {self.destination} true` works without a prompt, or leave "
            "[target] ssh out"
        )

    def read_s(self) -> float:
        """The server's CPU seconds so far (utime + stime)."""
        return (
            cgroup.parse_counter("proc_stat_ticks", self.ask(f"cat /proc/{self.pid}/stat"))
            / self.ticks_per_s
        )

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()  # the remote shell reads EOF and ends
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.stop_group(process, proc.TOOL_STOP)
        if process.stdout is not None:
            process.stdout.close()


def cpu_measurement(cpu: SshCpu | None, destination: str) -> str:
    if cpu is None:
        return f"not measured: {MISSING['pid']} (give [target] ssh to read it there)"
    return (
        f"{cpu.source} of pid {cpu.pid} on {destination}, over one open ssh connection, read "
        "before and after each client run (so its window includes the clients' connects)"
    )
