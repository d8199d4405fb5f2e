"""scripts/setup.sh's choice of uv, with stub commands on PATH (nothing is installed): the uv
on PATH when it is the pinned version; otherwise encbench's own in a venv of the system
Python, with python3-venv installed first where venv cannot run — never pip into the system
Python, which a stock Debian 12 lacks and marks externally managed (PEP 668)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO

ROOT = REPO
SCRIPT = ROOT / "scripts" / "setup.sh"
PINNED = re.search(r"^UV_VERSION=(\S+)$", SCRIPT.read_text(), flags=re.MULTILINE)
assert PINNED is not None
VERSION = PINNED.group(1)
# What the functions use beside the stubs: linked into a PATH of their own, so that no real
# uv or python3 of this machine answers.
TOOLS = ("bash", "cut", "rm", "mkdir", "dirname", "cat", "chmod", "touch")


def stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)


class Machine:
    """A PATH of stubs that log every call: python3 (whose venv works once python3-venv is
    'installed'), the package installer, and optionally a uv of some version."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "calls.log"
        self.log.touch()
        self.tools_dir = root / "tools"
        for tool in TOOLS:
            found = shutil.which(tool)
            assert found, tool
            (self.bin / tool).symlink_to(found)
        stub(
            self.bin / "python3",
            'echo "python3 $*" >> "$LOG"\n'
            'if [ "$1" = -c ]; then [ -e "$STATE/venv-ok" ]; exit $?; fi\n'
            'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
            '  mkdir -p "$3/bin"\n'
            "  cat > \"$3/bin/pip\" <<'EOF'\n"
            "#!/bin/bash\n"
            'echo "pip $*" >> "$LOG"\n'
            'for a in "$@"; do case $a in uv==*)\n'
            '  printf \'#!/bin/bash\\necho "uv %s (stub)"\\n\' "${a#uv==}" > "$(dirname "$0")/uv"\n'
            '  chmod 755 "$(dirname "$0")/uv";; esac; done\n'
            "EOF\n"
            '  chmod 755 "$3/bin/pip"; exit 0\n'
            "fi\n"
            "exit 3\n",
        )
        stub(
            root / "apt-install",
            'echo "apt-install $*" >> "$LOG"\n'
            'if [ -e "$STATE/not-root" ]; then\n'
            '  echo "setup: need root to install: $*" >&2; exit 2\n'
            "fi\n"
            'touch "$STATE/venv-ok"\n',
        )

    def uv_on_path(self, version: str) -> None:
        stub(self.bin / "uv", f'echo "uv {version} (stub)"\n')

    def venv_works(self) -> None:
        (self.root / "venv-ok").touch()

    def not_root(self) -> None:
        (self.root / "not-root").touch()

    def ensure_uv(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", f'source "{SCRIPT}" && ensure_uv && echo "UV=$UV"'],
            capture_output=True,
            text=True,
            env={
                "PATH": str(self.bin),
                "LOG": str(self.log),
                "STATE": str(self.root),
                "ENCBENCH_TOOLS_DIR": str(self.tools_dir),
                "ENCBENCH_APT_INSTALL": str(self.root / "apt-install"),
            },
            cwd=self.root,
            timeout=60,
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines()


@pytest.fixture()
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_the_uv_on_path_at_the_pinned_version_is_used_and_nothing_is_installed(
    machine: Machine,
) -> None:
    machine.uv_on_path(VERSION)
    result = machine.ensure_uv()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"UV={machine.bin / 'uv'}"
    assert machine.calls() == []


def test_a_stock_debian_12_gets_python3_venv_then_encbenchs_own_uv(machine: Machine) -> None:
    """No uv, no pip, no venv module: python3-venv, a venv, uv by the venv's pip."""
    result = machine.ensure_uv()
    assert result.returncode == 0, result.stderr
    own = machine.tools_dir / "uv" / "bin" / "uv"
    assert result.stdout.strip() == f"UV={own}"
    assert machine.calls() == [
        "python3 -c import ensurepip, venv",
        "apt-install python3-venv",
        f"python3 -m venv {machine.tools_dir / 'uv'}",
        f"pip install -q --disable-pip-version-check uv=={VERSION}",
    ]
    assert not any("-m pip" in call for call in machine.calls())  # never the system's pip


def test_with_venv_available_nothing_is_asked_of_apt(machine: Machine) -> None:
    machine.venv_works()
    result = machine.ensure_uv()
    assert result.returncode == 0, result.stderr
    assert not any(call.startswith("apt-install") for call in machine.calls())
    assert f"pip install -q --disable-pip-version-check uv=={VERSION}" in machine.calls()


def test_a_uv_of_another_version_is_left_alone_and_encbench_uses_its_own(
    machine: Machine,
) -> None:
    machine.uv_on_path("0.1.0")
    machine.venv_works()
    result = machine.ensure_uv()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"UV={machine.tools_dir / 'uv' / 'bin' / 'uv'}"
    assert (machine.bin / "uv").read_text().count("0.1.0") == 1  # untouched


def test_encbenchs_own_uv_once_made_is_used_again_without_installing(machine: Machine) -> None:
    machine.venv_works()
    assert machine.ensure_uv().returncode == 0
    made = machine.calls()
    second = machine.ensure_uv()
    assert second.returncode == 0, second.stderr
    assert machine.calls() == made  # nothing more was called
    assert second.stdout.strip() == f"UV={machine.tools_dir / 'uv' / 'bin' / 'uv'}"


def test_without_root_for_python3_venv_setup_stops_with_the_fix(machine: Machine) -> None:
    machine.not_root()
    result = machine.ensure_uv()
    assert result.returncode != 0
    assert "need root to install: python3-venv" in result.stderr
    assert not (machine.tools_dir / "uv").exists()


def test_sourcing_the_script_runs_nothing(tmp_path: Path) -> None:
    """Only the functions are defined: no apt, no uv sync (the tests above rely on it)."""
    result = subprocess.run(
        ["bash", "-c", f'source "{SCRIPT}" && type ensure_uv >/dev/null && echo sourced'],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "ENCBENCH_APT_INSTALL": "/bin/false"},
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sourced"


def test_a_named_profile_asks_encbench_which_packages_it_needs(tmp_path: Path) -> None:
    """`scripts/setup.sh postgresql`: what the profile needs beyond the usual packages comes
    from `encbench doctor PROFILE --packages`; an unknown profile stops the set-up."""
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    stub(
        venv / "encbench",
        'if [ "$3" = postgresql ]; then echo postgresql-15; exit 0; fi\n'
        'echo "encbench: unknown profile $3" >&2; exit 2\n',
    )

    def packages(*profiles: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", f'source "{SCRIPT}" && profile_packages "$@"', "-", *profiles],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )

    found = packages("postgresql")
    assert found.returncode == 0 and found.stdout.split() == ["postgresql-15"]
    # encbench's own status for a bad name (2), not a generic failure.
    assert packages("postgresql", "nosuch").returncode == 2
