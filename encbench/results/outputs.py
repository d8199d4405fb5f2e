"""Every file or directory a command writes, checked before the command does any work: a
path that cannot be written is refused in one line (exit 2) before minutes of measuring, not
found by a traceback after them.  A write that still fails (a full disk, a folder removed
meanwhile) is one line too, exit 1: the work was done, only its copy was lost."""

from __future__ import annotations

import os
from pathlib import Path

from encbench.errors import BadInput, EncbenchError


class WriteFailed(EncbenchError):
    """The work is done but its output could not be written."""


def _nearest_existing(path: Path) -> Path:
    existing = path.absolute().parent
    while not existing.exists():
        existing = existing.parent
    return existing


def _writable_folder(folder: Path, path: Path, option: str) -> None:
    if not folder.is_dir():
        raise BadInput(f"{option} {path}: {folder} is not a directory; choose another {option}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BadInput(f"{option} {path}: {folder} is not writable; choose another {option}")


def check_new_file(path: Path, option: str) -> None:
    """A file the command will create: absent, its folder there and writable."""
    if path.is_dir():
        raise BadInput(f"{option} {path} is a directory: give a file name, e.g. {path}/out.json")
    if path.exists():
        raise BadInput(f"{path} exists: choose another {option} path")
    folder = path.absolute().parent
    if not folder.exists():
        raise BadInput(
            f"{option} {path}: the folder {path.parent} does not exist; create it "
            f"(mkdir -p {path.parent}) or choose another {option}"
        )
    _writable_folder(folder, path, option)


def check_new_directory(path: Path, option: str) -> None:
    """A directory the command will create (with its missing parents) or fill while empty:
    not a file, and the nearest folder that exists writable."""
    if path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} is a file, not a directory: choose another {option}")
    if path.is_dir():
        _writable_folder(path, path, option)
        return
    _writable_folder(_nearest_existing(path), path, option)


def write_text(path: Path, text: str) -> None:
    """`text` into `path`; an OS error in one line (WriteFailed, exit 1)."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise WriteFailed(f"cannot write {path}: {exc.strerror or exc}") from exc


def make_directory(path: Path) -> None:
    """`path` and its missing parents; an OS error in one line (WriteFailed, exit 1)."""
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise WriteFailed(f"cannot create {path}: {exc.strerror or exc}") from exc
