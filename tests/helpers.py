"""Shared by the tests: run the real CLI as a user would, and find what it left running."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.proc import OWNER_ENV
from encbench.servers import registry

# The tests' own folder and the repository: a test file finds both from here, at any depth.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
GOLDEN_ROOT = TESTS / "golden"


def encbench(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it; `prefix` runs it elsewhere (e.g. `ip netns exec NS`: on
    another emulated host)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "encbench", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def encbench_here(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI in this process, through click's own test runner: the same command object,
    exit status, stdout and stderr as `encbench` gives, without a new interpreter importing
    encbench for each call (over a second of CPU on a 2-core VM).  For a command that starts
    no process of its own: a refusal, `plan` (of a target too), `report`, `estimate --rules`;
    a run, `clean`, a signal or another host needs `encbench`.  An exception that would reach
    the user as a traceback is raised here."""
    from click.testing import CliRunner

    from encbench.cli import main

    # A run refused after its results directory opened has named this process's run
    # (proc.set_run_id): put the name back, or every later child of this worker carries it.
    run_id = proc.current_run().run_id
    try:
        with contextlib.chdir(cwd or Path.cwd()):
            result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=True)
    finally:
        proc.set_run_id(run_id)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(
        ["encbench", *args], result.exit_code, result.stdout, result.stderr
    )


def run_cli(
    *args: str, state_dir: Path, timeout: float = 900
) -> tuple[subprocess.CompletedProcess[str], int]:
    """encbench as a user runs it, with the sandbox registry in `state_dir`; also its pid,
    which marks every process it starts."""
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )
    out, err = child.communicate(timeout=timeout)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err), child.pid


def processes_owned_by(owner_pid: int) -> list[str]:
    """Live processes whose environment carries encbench's marker for this owner (the marker
    is `PID:START_TICKS:RUN_ID`, see proc.RunIdentity)."""
    found = []
    marker = f"{OWNER_ENV}={owner_pid}:".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if any(item.startswith(marker) for item in environ.split(b"\0")) and state != "Z":
            found.append(f"{entry.name} {cmdline}")
    return found


def namespaces_left(state_dir: Path) -> list[str]:
    """What a run with this XDG_STATE_HOME left of its network namespaces: a link record that
    outlived the run (encbench deletes it only once both namespaces are gone), and any
    namespace such a record names.  Only this run's: other runs on a shared machine, or a
    killed test's leftovers, are none of its business."""
    from encbench.net import netns

    links = sorted((state_dir / "encbench" / "netns").glob("*.json"))
    named = {
        str(n)
        for link in links
        for n in json.loads(link.read_text()).values()
        if str(n).startswith(netns.PREFIX)
    }
    try:
        present = set(netns.namespaces())
    except netns.NetnsUnavailable:
        present = set()
    return [f"record {link.name}" for link in links] + sorted(named & present)


def tiny_profile(path: Path, **measure: object) -> Path:
    """A profile small enough for a test: one table, one regime, short rounds, one `openssl
    speed` run a direction of the cipher (cipher_speed_repeats).  The tests check the run's
    mechanics, so no round is measured again for the machine's other load
    (interference_max_pct = 100: a test's own second encbench would otherwise be that load);
    tests/engine/test_engine.py proves the re-measuring."""
    settings = {
        "interference_max_pct": "100",
        "workloads": '["oltp_point_select"]',
        "regimes": '["in-memory"]',
        "threads": "[2]",
        "warmup_s": "0",
        "run_s": "1",
        "min_rounds": "2",
        "max_rounds": "2",
        "cell_budget_s": "60",
    }
    settings.update({k: str(v) for k, v in measure.items()})
    body = "\n".join(f"{k} = {v}" for k, v in settings.items())
    path.write_text(
        f'name = "tiny"\ncipher_speed_repeats = 1\n[data]\ntables = 1\ntable_size = 2000\n'
        f"[measure]\n{body}\n"
    )
    return path


def skip_unless_ci(reason: str) -> None:
    """Skip a test whose tools are missing, except in CI: `make test` installs them there, so
    a missing tool in CI is a broken set-up and must fail, not pass as skipped."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def need_root(name: str) -> None:
    """A private root's tests (scripts/setup.sh NAME builds it): skipped where it is not
    built, failed in CI (skip_unless_ci)."""
    from encbench.machine import roots

    if roots.find(name) is None:
        skip_unless_ci(roots.missing_why(name))


def start_plain_server(
    root: Path,
    buffer_pool_mb: int = 16,
    use_cgroup: bool = True,
    install: str = "system",
    binlog: bool = False,
) -> Any:
    """A started plain sandbox server (the caller destroys it), of this host's MariaDB or of
    a private root's server (`install`: "mysql", "mariadb-11.8"), with a binary log if
    `binlog`."""
    from encbench.servers.mariadb import installs
    from encbench.servers.mariadb.options import server_options
    from encbench.servers.mariadb.sandbox import SandboxServer
    from encbench.servers.variants import EncryptionSpec

    server = SandboxServer("plain", root, use_cgroup=use_cgroup, install=installs.of(install))
    options = server_options(
        "plain",
        EncryptionSpec(),
        server.paths,
        port=server.port,
        buffer_pool_mb=buffer_pool_mb,
        key_file=Path("/nonexistent"),
        run_as_root=os.geteuid() == 0,
        binlog=binlog,
    )
    server.initialize(options)
    server.start(options)
    return server


_KILLED_RUN = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from tests.helpers import start_plain_server\n"
    "install = sys.argv[2] if len(sys.argv) > 2 else 'system'\n"
    "print(start_plain_server(Path(sys.argv[1]), install=install).pid, flush=True)\n"
    "os.kill(os.getpid(), 9)\n"
)


def server_of_a_killed_run(
    root: Path, state_dir: Path, script: str = _KILLED_RUN, install: str = "system"
) -> int:
    """The pid of a server whose run was killed outright (SIGKILL: no clean-up ran), so the
    server outlives it in its own process group, recorded as a dead run's.  `script` starts
    the server in `sys.argv[1]` (of the install `sys.argv[2]`), prints its pid and kills
    itself (default: a plain server of that install, this host's MariaDB by default)."""
    killed = subprocess.run(
        [sys.executable, "-c", script, str(root), install],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    return int(killed.stdout.strip())


def mounts_under(path: Path) -> list[str]:
    """Mount points below this directory (/proc/mounts)."""
    where = os.path.realpath(path)
    found = []
    for line in Path("/proc/mounts").read_text().splitlines():
        point = line.split()[1].replace("\\040", " ")
        if point.startswith(where + "/"):
            found.append(point)
    return found


def loops_under(path: Path) -> list[str]:
    """Loop devices whose backing file is below this directory (`losetup --list`)."""
    out = proc.run(
        ["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"],
        phase="losetup --list",
        timeout_s=30,
    ).stdout
    where = os.path.realpath(path)
    return [line for line in out.splitlines() if where + "/" in line]


def files_holding(directory: Path, secret: str) -> list[str]:
    """The files under directory whose bytes hold the secret (a password must be in none)."""
    wanted = secret.encode()
    return [
        str(path.relative_to(directory))
        for path in directory.rglob("*")
        if path.is_file() and wanted in path.read_bytes()
    ]


def running_from(out: Path) -> list[str]:
    """Live processes whose command line names the results directory (its servers do)."""
    import psutil

    return [
        " ".join(p.info["cmdline"])
        for p in psutil.process_iter(["cmdline"])
        if str(out) in " ".join(p.info["cmdline"] or [])
    ]


def terminated_leaving_nothing(
    child: subprocess.Popen[str], out: Path, state_dir: Path, timeout: float = 180
) -> str:
    """SIGTERM to a running `encbench run --out OUT`: it ends as interrupted, without a
    traceback, and leaves no process, sandbox, registry entry or network namespace; its
    stderr, for what a test asserts beyond that."""
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=timeout)
    assert child.returncode in (130, 143), stderr
    assert "Traceback" not in stderr
    assert processes_owned_by(child.pid) == []
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []
    return stderr


@contextlib.contextmanager
def with_further_kind(monkeypatch: Any, study: Any, cells: Any, kind: Any) -> Iterator[Any]:
    """`kind` registered (servers/server_kind.py) and `study` given `cells`, a KindCells in
    its `other_kinds` (the one door of a further kind): the study as it then is, for a test
    of a new kind; both put back after."""
    import dataclasses

    from encbench import studies
    from encbench.profiles import profile as profiles
    from encbench.servers import server_kind

    server_kind.register_kinds((*server_kind.KINDS, kind))
    grown = dataclasses.replace(study, other_kinds=(*study.other_kinds, cells))
    before = studies.STUDIES
    monkeypatch.setattr(studies, "STUDIES", tuple(grown if s is study else s for s in before))
    profiles.register_studies(studies.STUDIES)
    try:
        yield grown
    finally:
        profiles.register_studies(before)
        server_kind.register_kinds(server_kind.KINDS)
