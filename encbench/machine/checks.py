"""One check of what a study needs on this machine (a tool, a privilege, a kernel feature),
with the command that fixes what is missing: what `encbench doctor` prints and what a run
refuses to start without.  Each study declares its own (studies/<name>/__init__.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from encbench import proc
from encbench.machine import roots


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    # The Debian package that provides what is missing, where one does: what
    # `encbench doctor PROFILE --packages` lists and `scripts/setup.sh PROFILE` installs.
    package: str = ""

    def problem(self) -> str:
        """The one line a run that cannot start prints."""
        return f"{self.name} {self.detail}: {self.fix}"


def binary(name: str, package: str) -> Check:
    path = proc.which(name)
    if path:
        return Check(name, True, path)
    return Check(name, False, "not found", f"apt-get install {package} (or `make setup`)", package)


def private_root(name: str) -> Check:
    """A newer server's private root (machine/roots.py), built once by scripts/setup.sh NAME."""
    found = roots.find(name)
    if found is not None:
        return Check(f"{found.spec.title} root", True, f"{found.version} in {found.path}")
    spec = roots.spec(name)
    return Check(f"{spec.title} root", False, "not built", f"sudo scripts/setup.sh {name} (once)")


def root(why: str) -> Check:
    """Root, for what only root may do here (network namespaces, cgroups); `why` is the fix's
    reason, e.g. "the state-transfer study's two hosts are network namespaces"."""
    ok = os.geteuid() == 0
    return Check(
        "root privileges",
        ok,
        "present" if ok else "missing",
        "" if ok else f"{why}: run encbench as root (sudo)",
    )


def missing_packages(found: list[Check]) -> list[str]:
    """The Debian packages that would fix the failed checks, each once, sorted."""
    return sorted({c.package for c in found if not c.ok and c.package})


def unique(checks: list[Check]) -> list[Check]:
    """Each check once, in first-seen order (two methods may both need socat)."""
    return list({check.name: check for check in checks}.values())
