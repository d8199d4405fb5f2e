"""Output paths a command writes after its work (`--json FILE`, `compare --out DIR`):
checked before any work, so a path that cannot be written fails in a second with its fix,
not after minutes of measuring; and an OS error while writing is one line, not a
traceback."""

from __future__ import annotations

import os
from pathlib import Path

from encbench.errors import BadInput, EncbenchError


class WriteFailed(EncbenchError):
    """The work was done but its output could not be written (exit 1: not bad input)."""


def check_new(path: Path, option: str) -> None:
    """`path` does not exist yet, and its folder does and takes new files."""
    if path.exists():
        raise BadInput(f"{option} {path} exists: choose another {option} path")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise BadInput(
            f"{option} {path}: the folder {folder} does not exist; create it, or choose "
            f"another {option} path"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BadInput(
            f"{option} {path}: the folder {folder} is not writable here; choose another "
            f"{option} path"
        )


def write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise WriteFailed(f"could not write {path}: {exc.strerror or exc}") from exc
