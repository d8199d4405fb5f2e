"""encbench's state on this machine, outside every results directory: one folder per kind
under $XDG_STATE_HOME/encbench (default ~/.local/state/encbench) — the sandboxes, network
links and cgroups of live runs, so that `encbench clean` can find what a killed run left
behind, and the latest A/A calibration.  Each record is one JSON file; one that cannot be
read (torn by a crash, or of an older shape) is passed over, never fatal."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def _xdg(variable: str, default: str, environ: Mapping[str, str] | None) -> Path:
    """encbench's folder under an XDG base directory ($variable, else ~/default)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or str(Path.home())
    return Path(env.get(variable) or Path(home) / default) / "encbench"


def base(environ: Mapping[str, str] | None = None) -> Path:
    """Where encbench keeps this machine's records, for this process's environment (or for
    another process's, read from /proc: whose records it would write)."""
    return _xdg("XDG_STATE_HOME", ".local/state", environ)


def data_base(environ: Mapping[str, str] | None = None) -> Path:
    """Where encbench keeps what it builds to keep (the private roots: machine/roots.py):
    $XDG_DATA_HOME/encbench, default ~/.local/share/encbench."""
    return _xdg("XDG_DATA_HOME", ".local/share", environ)


def folder(kind: str) -> Path:
    """The folder of one kind of record, created on first use."""
    path = base() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_records(kind: str, make: Callable[[dict[str, Any]], T]) -> list[T]:
    """Every readable record of a kind, in file-name order."""
    found = []
    for path in sorted(folder(kind).glob("*.json")):
        try:
            found.append(make(json.loads(path.read_text())))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return found
