"""What must be on the machine before a study starts, checked in a second rather than after
an hour, each with the command that fixes it.  `encbench doctor` prints the same checks."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from encbench import environment, proc
from encbench.errors import BadInput

PLUGIN_DIRS = (Path("/usr/lib/mysql/plugin"), Path("/usr/lib64/mysql/plugin"))


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _binary(name: str, package: str) -> Check:
    path = proc.which(name)
    if path:
        return Check(name, True, path)
    return Check(name, False, "not found", f"apt-get install {package} (or `make setup`)")


def tool_checks() -> list[Check]:
    checks = [
        _binary("mariadbd", "mariadb-server"),
        _binary("mariadb-install-db", "mariadb-server"),
        _binary("sysbench", "sysbench"),
        _binary("openssl", "openssl"),
    ]
    plugin = next(
        (
            d / "file_key_management.so"
            for d in PLUGIN_DIRS
            if (d / "file_key_management.so").exists()
        ),
        None,
    )
    checks.append(
        Check(
            "file_key_management plugin",
            plugin is not None,
            str(plugin or "not found"),
            "" if plugin else "apt-get install mariadb-server",
        )
    )
    return checks


def machine_checks(path: Path) -> list[Check]:
    cpu = environment.cpu_info()
    flags = cpu["flags"]
    free_gib = shutil.disk_usage(path).free / 2**30
    return [
        Check(
            "AES instructions (aes)",
            bool(flags["aes"]),
            "present" if flags["aes"] else "absent: AES runs in software, expect large costs",
        ),
        Check("vector AES (vaes)", True, "present" if flags["vaes"] else "absent (optional)"),
        Check(
            "free disk",
            free_gib > 2,
            f"{free_gib:.1f} GiB at {path.resolve()}",
            "" if free_gib > 2 else "free space or use --out on a larger disk",
        ),
    ]


def require_tools() -> None:
    for check in tool_checks():
        if not check.ok:
            raise BadInput(f"{check.name} {check.detail}: {check.fix}")
