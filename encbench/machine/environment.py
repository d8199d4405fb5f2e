"""The machine and software a result set was measured on, recorded once per results."""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from encbench import capacity as crypto
from encbench import proc


def cpu_info() -> dict[str, Any]:
    """Model, cores and the CPU flags that decide what encryption costs (read by crypto's
    parser, so the report and `encbench crypto` can never disagree about them)."""
    flags = crypto.read_cpu_flags().to_json()
    model = flags.pop("model") or platform.processor()
    flags.pop("avx512_flags")
    return {"model": model, "cores": os.cpu_count() or 1, "flags": flags}


def collect(versions: Mapping[str, str | None]) -> dict[str, Any]:
    """The machine, and each server kind's installed version under its name ("mariadb":
    None where it is not installed: servers/server_kind.py's `installed_versions`)."""
    return {
        "cpu": cpu_info(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "kernel": platform.release(),
        "os": _os_release(),
        "python": platform.python_version(),
        **versions,
        "openssl": proc.tool_version(["openssl", "version"]),
        "sysbench": proc.tool_version(["sysbench", "--version"], r"sysbench\s+(\S+)"),
    }


def _os_release() -> str:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return platform.system()
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return match[1] if match else platform.system()
