"""A record of every live sandbox, so that `encbench clean` can stop what a killed run
(SIGKILL, power loss) left behind, and only that.

One JSON file per sandbox under $XDG_STATE_HOME/encbench/sandboxes (default
~/.local/state/...).  An entry says what kind of server it records (`mariadb`, the kind of
entries written before kinds existed, or `postgresql`), and so how it is recognised and
stopped.  The run that owns an entry is named by its RunIdentity (pid and start time), so a
recycled pid never makes a dead run look alive.  A server is only signalled when its command
line still names the sandbox's own defaults file (MariaDB) or data directory (PostgreSQL)
and its start time is the one recorded, so a recycled pid can never hit a stranger.  An
entry whose sandbox directory is gone and whose server is not running says nothing any more
and is dropped on sight.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from encbench import proc, state
from encbench.servers import server_kind

SANDBOX_MARKER = ".encbench-sandbox"
# The kinds' names as entries record them (servers/server_kind.py: each kind says how its server is
# recognised and stopped).
MARIADB = "mariadb"
POSTGRESQL = "postgresql"


def registry_dir() -> Path:
    return state.folder("sandboxes")


@dataclass(frozen=True)
class Entry:
    name: str
    server_pid: int
    owner_pid: int
    root: str
    socket_dir: str
    defaults_file: str
    # None in entries written before start times were recorded: only pids can be checked.
    owner_start_ticks: int | None = None
    run_id: str = ""
    server_start_ticks: int | None = None
    # Entries written before kinds existed are MariaDB's.
    kind: str = MARIADB
    # PostgreSQL: the data directory its command line names (`-D`); "" for MariaDB.
    datadir: str = ""

    @classmethod
    def new(
        cls,
        name: str,
        server_pid: int,
        root: Path,
        socket_dir: Path,
        defaults_file: Path,
        *,
        kind: str = MARIADB,
        datadir: Path | None = None,
    ) -> Entry:
        """The entry of a server this run has just started (our unreaped child, so its pid
        cannot have been recycled yet when its start time is read)."""
        if server_kind.find(kind) is None:
            raise ValueError(f"unknown server kind {kind!r}")
        owner = proc.current_run()
        return cls(
            name=name,
            server_pid=server_pid,
            owner_pid=owner.pid,
            root=str(root),
            socket_dir=str(socket_dir),
            defaults_file=str(defaults_file),
            owner_start_ticks=owner.start_ticks,
            run_id=owner.run_id,
            server_start_ticks=proc.start_ticks(server_pid),
            kind=kind,
            datadir=str(datadir) if datadir is not None else "",
        )

    @property
    def command_mark(self) -> str:
        """What the server's command line must name to be this entry's server: its own
        defaults file (mariadbd), or its data directory (postgres -D); empty in an entry
        that lacks it, which `_server` then never matches."""
        kind = server_kind.find(self.kind)
        return kind.sandbox.mark(self) if kind is not None else ""

    @property
    def owner(self) -> proc.RunIdentity:
        return proc.RunIdentity(self.run_id, self.owner_pid, self.owner_start_ticks)

    @property
    def path(self) -> Path:
        return registry_dir() / f"{self.name}-{self.server_pid}.json"


def register(entry: Entry) -> None:
    entry.path.write_text(json.dumps(asdict(entry)))


def unregister(entry: Entry) -> None:
    entry.path.unlink(missing_ok=True)


def _recorded() -> list[Entry]:
    return state.read_records("sandboxes", lambda data: Entry(**data))


def is_stale(entry: Entry) -> bool:
    """Its sandbox directory is gone (deleted by hand or by remove_sandbox_files) and its server
    is not running: nothing is left to stop or delete."""
    return not Path(entry.root).exists() and not server_running(entry)


def entries() -> list[Entry]:
    """The recorded sandboxes; stale entries are forgotten on the way."""
    found = []
    for entry in _recorded():
        if is_stale(entry):
            unregister(entry)
        else:
            found.append(entry)
    return found


def _server(entry: Entry) -> psutil.Process | None:
    """The entry's server process, if its pid still runs that server: the command line names
    the sandbox's own defaults file or data directory and, where recorded, the start time
    matches.  An entry of a kind this version does not know is never signalled."""
    kind = server_kind.find(entry.kind)
    if kind is None or not entry.command_mark:
        return None
    try:
        process = psutil.Process(entry.server_pid)
        if not kind.sandbox.names(process.cmdline(), entry.command_mark):
            return None
    except psutil.Error:
        return None
    if entry.server_start_ticks is not None:
        if proc.start_ticks(entry.server_pid) != entry.server_start_ticks:
            return None
    elif not proc.pid_alive(entry.server_pid):
        return None
    return process


def server_running(entry: Entry) -> bool:
    return _server(entry) is not None


def remove_sandbox_files(root: Path, socket_dir: Path | None = None) -> None:
    """Delete a sandbox directory, but only one that encbench created (it holds the marker),
    and forget the registry entries it leaves stale."""
    if (root / SANDBOX_MARKER).exists():
        shutil.rmtree(root, ignore_errors=True)
    if socket_dir and socket_dir.name.startswith("encbench-") and socket_dir.is_dir():
        shutil.rmtree(socket_dir, ignore_errors=True)
    for entry in _recorded():
        if Path(entry.root) == root and is_stale(entry):
            unregister(entry)


def stop_server(entry: Entry, server: psutil.Process) -> None:
    """Stop a dead run's server as its kind shuts down: mariadbd's group by SIGTERM;
    PostgreSQL's postmaster by a fast, then an immediate shutdown, then whatever is left of
    its process group by SIGKILL.  `server` is `_server(entry)`: of a known kind."""
    server_kind.named(entry.kind).sandbox.stop(server)


def clean(include_live_runs: bool = False, only: proc.RunIdentity | None = None) -> list[str]:
    """Stop and remove sandboxes whose run is gone (or every one, with include_live_runs; or
    exactly those of the run `only`, live as it is).
    Returns one line per action.  The groups those servers were in are cgroup.clean_stale's,
    once the dead runs' other processes are gone too (`encbench clean` orders the two)."""
    actions = []
    for entry in _recorded():
        if only is not None and not proc.to_clean(entry.owner, False, only):
            continue
        if is_stale(entry):
            unregister(entry)
            actions.append(f"forgot {entry.name} (pid {entry.server_pid}): {entry.root} is gone")
            continue
        if not proc.to_clean(entry.owner, include_live_runs, only):
            actions.append(
                f"skipped {entry.name} (pid {entry.server_pid}): its {entry.owner} is still going"
            )
            continue
        server = _server(entry)
        if server is not None:
            stop_server(entry, server)
            actions.append(f"stopped {entry.name} (pid {entry.server_pid})")
        remove_sandbox_files(Path(entry.root), Path(entry.socket_dir))
        actions.append(f"removed {entry.root}")
        unregister(entry)
    return actions
