"""A record of every live sandbox, so that `encbench clean` can stop what a killed run
(SIGKILL, power loss) left behind, and only that.

One JSON file per sandbox under $XDG_STATE_HOME/encbench/sandboxes (default
~/.local/state/...).  A server is only signalled when /proc shows that its command line still
names the sandbox's own defaults file, so a recycled pid can never hit a stranger.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

from encbench import proc

SANDBOX_MARKER = ".encbench-sandbox"


def registry_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    path = Path(base) / "encbench" / "sandboxes"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class Entry:
    name: str
    server_pid: int
    owner_pid: int
    root: str
    socket_dir: str
    defaults_file: str

    @property
    def path(self) -> Path:
        return registry_dir() / f"{self.name}-{self.server_pid}.json"


def register(entry: Entry) -> None:
    entry.path.write_text(json.dumps(asdict(entry)))


def unregister(entry: Entry) -> None:
    entry.path.unlink(missing_ok=True)


def entries() -> list[Entry]:
    found = []
    for path in sorted(registry_dir().glob("*.json")):
        try:
            found.append(Entry(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return found


def is_our_server(entry: Entry) -> bool:
    try:
        cmdline = Path(f"/proc/{entry.server_pid}/cmdline").read_bytes()
    except OSError:
        return False
    return entry.defaults_file.encode() in cmdline


def remove_sandbox_files(root: Path, socket_dir: Path | None = None) -> None:
    """Delete a sandbox directory, but only one that encbench created (it holds the marker)."""
    if (root / SANDBOX_MARKER).exists():
        shutil.rmtree(root, ignore_errors=True)
    if socket_dir and socket_dir.name.startswith("encbench-") and socket_dir.is_dir():
        shutil.rmtree(socket_dir, ignore_errors=True)


def clean(include_live_runs: bool = False) -> list[str]:
    """Stop and remove sandboxes whose run is gone.  Returns one line per action."""
    actions = []
    for entry in entries():
        if proc.pid_alive(entry.owner_pid) and not include_live_runs:
            actions.append(
                f"skipped {entry.name} (pid {entry.server_pid}): its run "
                f"(pid {entry.owner_pid}) is still going"
            )
            continue
        if proc.pid_alive(entry.server_pid) and is_our_server(entry):
            proc.kill_group(entry.server_pid, signal.SIGTERM)
            if not proc.wait_gone(entry.server_pid, 30):
                proc.kill_group(entry.server_pid, signal.SIGKILL)
                proc.wait_gone(entry.server_pid, 10)
            actions.append(f"stopped {entry.name} (pid {entry.server_pid})")
        remove_sandbox_files(Path(entry.root), Path(entry.socket_dir))
        actions.append(f"removed {entry.root}")
        unregister(entry)
    return actions
