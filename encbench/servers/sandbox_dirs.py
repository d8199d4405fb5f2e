"""A run's sandbox directories (DIR/sandbox/<server>) around its servers' lives: one left by
an earlier run is cleared before a server is provisioned on it, and DIR/sandbox goes once
its last server is destroyed."""

from __future__ import annotations

from pathlib import Path

from encbench.errors import BadInput
from encbench.results.store import ResultStore
from encbench.servers import registry


def clear_stale_sandbox(root: Path) -> None:
    """A run killed outright (SIGKILL, power loss) leaves its sandbox behind, perhaps with its
    server still running on it; --resume must neither start a second server on that data
    directory nor silently kill the first."""
    if not root.exists():
        return
    for entry in registry.entries():
        if Path(entry.root) == root and registry.server_running(entry):
            raise BadInput(
                f"a server from an earlier run still uses {root} (pid {entry.server_pid}): "
                "run `encbench clean` first"
            )
    registry.remove_sandbox_files(root)


def remove_empty_sandbox_dir(store: ResultStore) -> None:
    """DIR/sandbox once its last server is destroyed: a finished run leaves only results."""
    remove_if_empty(store.path / "sandbox")


def remove_if_empty(directory: Path) -> None:
    """A run's directory of servers' places (DIR/sandbox, DIR/volumes) once nothing is left
    in it; one that still holds something stays, for `encbench clean` or the user."""
    if directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
