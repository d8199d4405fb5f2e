"""Benchmark (a stress test, not a timed one): does every stop stop?

A run is stopped at random moments, as a user stops it: Ctrl-C (SIGINT to its process group,
as a terminal sends it), `kill` (SIGTERM), `kill -HUP` (SIGHUP) and a terminal that closes (a
real pty whose master is closed: the kernel hangs the terminal up, sends SIGHUP and fails
every later write with EIO).  Each try checks what the README promises:

- the process is gone within a bound (`--bound-s`) and its exit status is 130;
- nothing of it is left: no process carrying its marker, no sandbox, registry record, network
  namespace, mount or loop device, and (when run alone, `--clean-check`) `encbench clean`
  finds nothing;
- every run it had kept is still there, unchanged;
- the next try is `encbench run --resume` of the same directory (a chain), and a chain ends
  with a resume left to finish: it must end with status 0.

Moments are drawn from a seeded generator (`--draw`, its seed): uniform over
`[0, --span-s]` after the process started, so they fall in set-up, proofs, rounds, flushes and
report writing alike; or, with `--after-line N --delay-s D`, D seconds after the Nth result
line (a cell's verdict).
A try that ends before its moment is "finished first", not a failure: it starts a new chain.
Every try is appended to `--out`/tries.jsonl as it ends; a failed try's draw and index are in
it, so `--draw S --only I` replays it.

    .venv/bin/python -m benchmarks.stop_stress --out /tmp/stress [--profile smoke]
        [--signals SIGINT,SIGTERM,SIGHUP,hangup] [--moments 30] [--draw 1] [--span-s 45]
        [--command run|calibrate|measure-units|estimate-target]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from encbench import stopping
from encbench.servers.images import KIND as IMAGES
from tests.helpers import (
    files_holding,
    loops_under,
    mounts_under,
    namespaces_left,
    processes_owned_by,
)

KINDS = ("SIGINT", "SIGTERM", "SIGHUP", "hangup")
RESULT_LINE = re.compile(r"\[\d+ rounds")
STOPPED = 130


@dataclass(frozen=True)
class Moment:
    kind: str  # one of KINDS
    delay_s: float  # after the process started, or after the anchor line
    after_line: int = 0  # 0: from the start; N: from the Nth result line


@dataclass
class Try:
    seed: int
    index: int
    moment: Moment
    command: list[str]
    outcome: str = ""  # "stopped", "finished first", "failed"
    exit_code: int | None = None
    stop_s: float | None = None  # from the signal to the process's exit
    runs_before: int = 0
    runs_after: int = 0
    left: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stderr_tail: str = ""
    stack: str = ""  # where a process past the bound was (py-spy, where installed)
    # The signal came before the interpreter had run encbench's first line (the process
    # caught no SIGHUP yet: /proc/PID/status SigCgt): the kernel's default, death by that
    # signal, or for SIGINT the interpreter's KeyboardInterrupt, is then its stop, with
    # nothing started to leave behind.
    before_handlers: bool = False


# -- starting and stopping one process --------------------------------------------------------
def _own_terminal() -> None:
    """In the child (a pty for its standard streams): a new session whose controlling
    terminal is that pty, as a shell in a terminal window has; and SIGHUP at its default, in
    case this harness was started with it ignored (nohup)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _own_group() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Launched:
    """One encbench process: on a pty (its output drained by a thread, as a terminal does)
    or with its output in a file."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], log: Path, pty: bool) -> None:
        self.log = log
        self.pty = pty
        self.output = bytearray()
        self.master: int | None = None
        self._done = threading.Event()
        if pty:
            master, slave = os.openpty()
            self.process = subprocess.Popen(
                argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                preexec_fn=_own_terminal,
            )  # fmt: skip
            os.close(slave)
            self.master = master
            self._reader = threading.Thread(target=self._drain, daemon=True)
            self._reader.start()
        else:
            with open(log, "wb") as out:
                self.process = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    env=env, start_new_session=True, preexec_fn=_own_group,
                )  # fmt: skip
        self.started = time.monotonic()

    def _drain(self) -> None:
        assert self.master is not None
        while not self._done.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output.extend(chunk)

    def text(self) -> str:
        if self.master is not None:
            return self.output.decode(errors="replace")
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def hang_up(self) -> None:
        """Close the terminal: stop reading, then close the master (a read in flight would
        keep it open)."""
        self._done.set()
        self._reader.join()
        assert self.master is not None
        os.close(self.master)
        self.master = None

    def finish(self) -> None:
        if self.master is not None:
            self._done.set()
            self._reader.join()
            os.close(self.master)
            self.master = None
        if self.pty:
            self.log.write_bytes(bytes(self.output))


def stack_of(pid: int) -> str:
    """The Python stack of a process that did not stop in time, if py-spy is on PATH (an
    optional diagnostic: `uv tool install py-spy`)."""
    spy = shutil.which("py-spy") or shutil.which(str(Path.home() / ".local/bin/py-spy"))
    if spy is None:
        return ""
    done = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True)
    return done.stdout[-6000:]


def server_logs(out: Path) -> str:
    """The last lines of every server's error log in the run's sandboxes (a stop that waits
    is most often a server that does not go)."""
    found = []
    for log in (
        sorted((out / "sandbox").glob("**/*error*.log")) if (out / "sandbox").exists() else []
    ):
        lines = log.read_text(errors="replace").splitlines()[-8:]
        found.append(f"== {log.relative_to(out)}\n" + "\n".join(lines))
    return "\n".join(found)


def signal_of(kind: str) -> signal.Signals:
    return signal.SIGHUP if kind == "hangup" else signal.Signals[kind]


def catches(pid: int, sig: signal.Signals) -> bool:
    """Whether the process has a handler of `sig` (its SigCgt mask), True where unknown."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    found = re.search(r"^SigCgt:\s*([0-9a-f]+)$", status, re.M)
    return found is None or bool(int(found[1], 16) >> (sig - 1) & 1)


def send(launched: Launched, kind: str) -> bool:
    """Send the stop; False when the process had no handler of it yet (see Try)."""
    pid = launched.process.pid
    # encbench's first lines catch all three (SIGHUP last); before them only the interpreter
    # catches SIGINT, its own way (KeyboardInterrupt).
    caught = catches(pid, stopping.STOP_SIGNALS[-1])
    with contextlib.suppress(ProcessLookupError):
        if kind == "hangup":
            launched.hang_up()
        elif kind == "SIGINT":  # a terminal's Ctrl-C goes to the foreground process group
            os.killpg(pid, signal.SIGINT)
        else:
            os.kill(pid, signal.Signals[kind])
    return caught


def wait_for_moment(launched: Launched, moment: Moment) -> bool:
    """Sleep until the moment; False when the process ended first."""
    start = launched.started
    if moment.after_line:
        while len(RESULT_LINE.findall(launched.text())) < moment.after_line:
            if launched.process.poll() is not None:
                return False
            time.sleep(0.1)
        start = time.monotonic()
    deadline = start + moment.delay_s
    while time.monotonic() < deadline:
        if launched.process.poll() is not None:
            return False
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    return launched.process.poll() is None


# -- what a run left --------------------------------------------------------------------------
def runs_kept(out: Path) -> list[str]:
    """Every run line of every study's record file, in order."""
    lines = []
    for path in sorted(out.glob("*.jsonl")):
        lines += [f"{path.name}:{line}" for line in path.read_text().splitlines() if line]
    return lines


def left_behind(pid: int, out: Path, state_dir: Path) -> list[str]:
    found = [f"process {p}" for p in processes_owned_by(pid)]
    if (out / "sandbox").exists():
        found += [f"sandbox {p.name}" for p in (out / "sandbox").iterdir()] or ["sandbox/"]
    records = state_dir / "encbench"
    for kind in ("sandboxes", "cgroups", IMAGES, "netns"):
        found += [f"record {kind}/{p.name}" for p in sorted((records / kind).glob("*"))]
    found += [f"namespace {n}" for n in namespaces_left(state_dir)]
    found += [f"mount {m}" for m in mounts_under(out)]
    found += [f"loop {loop}" for loop in loops_under(out)]
    return sorted(set(found))


def secrets_exposed(out: Path) -> list[str]:
    """A stopped run keeps its key for --resume: mode 0600, and in no document or log."""
    key_file = out / "private" / "encryption.keys"
    if not key_file.exists():
        return []
    found = []
    if key_file.stat().st_mode & 0o077:
        found.append(f"{key_file.name} is mode {oct(key_file.stat().st_mode & 0o777)}")
    keys = [line.split(";")[1].strip() for line in key_file.read_text().splitlines() if ";" in line]
    for key in keys:
        found += [f"a key in {f}" for f in files_holding(out, key) if not f.startswith("private/")]
    return found


def encbench_clean(env: dict[str, str]) -> list[str]:
    """What `encbench clean` had to do ("nothing to clean": nothing)."""
    done = subprocess.run(
        [sys.executable, "-m", "encbench", "clean"], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip
    lines = [x for x in done.stdout.splitlines() if x and x != "nothing to clean"]
    return [f"clean: {x}" for x in lines] + (
        [f"clean rc {done.returncode}"] * bool(done.returncode)
    )


# -- tries and chains -------------------------------------------------------------------------
def command_for(
    command: str, profile: str, out: Path, extra: Sequence[str]
) -> tuple[list[str], bool]:
    if command == "run":
        return ["run", profile, "--out", str(out), *extra], True
    if command == "calibrate":
        return ["calibrate", profile, "--out", str(out), *extra], True
    if command == "measure-units":
        return ["estimate", "--measure-units", "--units-profile", profile, *extra], False
    if command == "estimate-target":
        return ["estimate", *extra], False
    raise SystemExit(f"unknown --command {command}")


def one_try(
    seed: int,
    index: int,
    moment: Moment,
    args: list[str],
    out: Path,
    work: Path,
    env: dict[str, str],
    bound_s: float,
    clean_check: bool,
) -> Try:
    state_dir = Path(env["XDG_STATE_HOME"])
    before = runs_kept(out)
    record = Try(seed, index, moment, ["encbench", *args], runs_before=len(before))
    log = work / f"try-{index:03d}.log"
    launched = Launched(
        [sys.executable, "-m", "encbench", *args], env, log, moment.kind == "hangup"
    )
    try:
        if not wait_for_moment(launched, moment):
            launched.process.wait()
            record.outcome = "finished first"
        else:
            sent = time.monotonic()
            record.before_handlers = not send(launched, moment.kind)
            try:
                launched.process.wait(timeout=bound_s)
                record.stop_s = round(time.monotonic() - sent, 2)
            except subprocess.TimeoutExpired:
                record.failures.append(f"still running {bound_s:g} s after {moment.kind}")
                record.stack = stack_of(launched.process.pid)
                record.stack += "\n" + "\n".join(processes_owned_by(launched.process.pid))
                record.stack += "\n" + server_logs(out)
                launched.process.wait(timeout=600)  # its clean-up may yet end it
                record.stop_s = round(time.monotonic() - sent, 2)
            record.outcome = "stopped"
    finally:
        if launched.process.poll() is None:
            launched.process.kill()
            launched.process.wait()
        launched.finish()
    record.exit_code = launched.process.returncode
    text = log.read_text(errors="replace")
    record.stderr_tail = "\n".join(text.splitlines()[-6:])
    if record.outcome == "stopped" and record.exit_code == 0:
        # It had its exit status before the signal came (encbench ignores a stop then).
        record.outcome = "finished first"
    killed = record.exit_code == -signal_of(moment.kind) if moment.kind != "none" else False
    # A Ctrl-C inside the interpreter's own start, before encbench's first line: Python's
    # KeyboardInterrupt (exit 1), as any Python program's, with nothing started.
    interpreter_stop = (
        moment.kind == "SIGINT"
        and record.exit_code == 1
        and text.rstrip().endswith("KeyboardInterrupt")
    )
    if record.outcome == "stopped" and record.before_handlers and (killed or interpreter_stop):
        record.outcome = "stopped before its handlers"
    elif record.outcome == "stopped" and record.exit_code != STOPPED:
        record.failures.append(f"exit status {record.exit_code}, not {STOPPED}")
    if record.outcome == "finished first" and record.exit_code != 0:
        record.failures.append(f"ended by itself with status {record.exit_code}")
    if "Traceback" in text and record.outcome != "stopped before its handlers":
        record.failures.append("a traceback")
    time.sleep(0.2)  # a child's exit may lag its parent's by a scheduling slice
    record.left = left_behind(launched.process.pid, out, state_dir)
    if clean_check:
        record.left += encbench_clean(env)
    if record.left:
        record.failures.append("left behind: " + "; ".join(record.left))
    record.failures += secrets_exposed(out)
    after = runs_kept(out)
    record.runs_after = len(after)
    if after[: len(before)] != before:
        record.failures.append(f"runs lost or rewritten: {len(before)} before, {len(after)} after")
    if record.failures:
        record.outcome = "failed"
    return record


def moments(seed: int, kinds: Sequence[str], count: int, span_s: float) -> list[Moment]:
    rng = random.Random(seed)
    return [
        Moment(kind, round(rng.uniform(0.0, span_s), 2)) for kind in kinds for _ in range(count)
    ]


@contextlib.contextmanager
def _state_env(state_dir: Path) -> Iterator[dict[str, str]]:
    """The children's environment, and this process's XDG_STATE_HOME set alike (the checks
    read the same records)."""
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state_dir)
    try:
        yield {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    finally:
        if before is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = before


def stress(
    work: Path,
    moments_: Sequence[Moment],
    *,
    seed: int,
    command: str = "run",
    profile: str = "smoke",
    extra: Sequence[str] = (),
    bound_s: float = 30.0,
    clean_check: bool = False,
    only: int | None = None,
    finish_chains: bool = True,
    fresh_each: bool = False,
) -> list[Try]:
    """Every moment a try; tries of one chain resume the same directory.  Returns the tries
    (also appended to work/tries.jsonl as each ends) and, last, each chain's finishing resume."""
    work.mkdir(parents=True, exist_ok=True)
    tries: list[Try] = []
    journal = work / "tries.jsonl"
    chain = 0
    finished: set[Path] = set()
    out = work / f"chain-{chain:02d}"
    fresh = True
    with _state_env(work / "state") as env, contextlib.ExitStack() as stack:
        if command == "estimate-target":
            extra = [*_estimate_target(work, stack), *extra]
        for index, moment in enumerate(moments_):
            if only is not None and index != only:
                continue
            first, resumable = command_for(command, profile, out, extra)
            args = first if fresh or not resumable else ["run", "--resume", str(out)]
            if resumable and not fresh and not (out / "profile.toml").exists():
                args = first  # stopped before its directory was made: start it again
            record = one_try(seed, index, moment, args, out, work, env, bound_s, clean_check)
            tries.append(record)
            with open(journal, "a") as f:
                f.write(json.dumps(asdict(record)) + "\n")
            print(describe(record), flush=True)
            fresh = False
            if record.outcome == "finished first":
                finished.add(out)
            if resumable and (fresh_each or record.outcome == "finished first"):
                chain += 1
                out = work / f"chain-{chain:02d}"
                fresh = True
        if finish_chains and command in ("run", "calibrate"):
            for directory in sorted(work.glob("chain-*")):
                if not (directory / "profile.toml").exists() or directory in finished:
                    continue
                done = subprocess.run(
                    [sys.executable, "-m", "encbench", "run", "--resume", str(directory)],
                    capture_output=True, text=True, env=env, timeout=1800,
                )  # fmt: skip
                record = Try(
                    seed, -1, Moment("none", 0.0), ["encbench", "run", "--resume", directory.name]
                )
                record.exit_code = done.returncode
                record.outcome = "finished" if done.returncode == 0 else "failed"
                if done.returncode != 0:
                    record.failures.append(f"resume ended with {done.returncode}")
                    record.stderr_tail = "\n".join(done.stderr.splitlines()[-6:])
                tries.append(record)
                with open(journal, "a") as f:
                    f.write(json.dumps(asdict(record)) + "\n")
                print(describe(record), flush=True)
    return tries


def _estimate_target(work: Path, stack: contextlib.ExitStack) -> list[str]:
    """A plain sandbox server for `estimate --target` (which only reads it), and typical unit
    costs stored for it to multiply (the estimate's figures are not what is checked here)."""
    from encbench.estimate import units
    from tests.estimate_helpers import typical
    from tests.helpers import start_plain_server

    units.write_machine(typical())
    # Its own records elsewhere: what the tries leave is looked for in the tries' state.
    with _state_env(work / "target-state"):
        server = start_plain_server(work / "target", use_cgroup=False)

    def destroy() -> None:
        with _state_env(work / "target-state"):
            server.destroy()

    stack.callback(destroy)
    dsn = f"mysql://{server.login}@localhost/?socket={server.paths.socket}"
    return ["--target", dsn, "--seconds", "15"]


def describe(t: Try) -> str:
    stop = f" in {t.stop_s:.1f} s" if t.stop_s is not None else ""
    words = f"{t.moment.kind} at {t.moment.delay_s:.1f} s: {t.outcome}{stop}, rc {t.exit_code}"
    return f"try {t.index:3d} ({' '.join(t.command[1:3])}): {words}" + (
        f" — {'; '.join(t.failures)}" if t.failures else ""
    )


def summary(tries: Sequence[Try]) -> dict[str, object]:
    stopped = [
        t
        for t in tries
        if t.outcome in ("stopped", "stopped before its handlers", "failed")
        and t.moment.kind != "none"
    ]
    by_kind: dict[str, dict[str, object]] = {}
    for kind in sorted({t.moment.kind for t in stopped}):
        mine = [t for t in stopped if t.moment.kind == kind]
        times = [t.stop_s for t in mine if t.stop_s is not None]
        by_kind[kind] = {
            "tries": len(mine),
            "failures": sum(bool(t.failures) for t in mine),
            "longest_stop_s": max(times, default=None),
            "median_stop_s": sorted(times)[len(times) // 2] if times else None,
        }
    return {
        "tries": len([t for t in tries if t.moment.kind != "none"]),
        "finished_first": sum(t.outcome == "finished first" for t in tries),
        "failures": sum(bool(t.failures) for t in tries),
        "by_signal": by_kind,
        "failed": [(t.seed, t.index) for t in tries if t.failures],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--command", default="run")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--signals", default=",".join(KINDS))
    parser.add_argument("--moments", type=int, default=30, help="per signal")
    parser.add_argument("--draw", type=int, default=1, help="which draw of moments")
    parser.add_argument("--span-s", type=float, default=45.0)
    parser.add_argument("--after-line", type=int, default=0)
    parser.add_argument("--delay-s", type=float, default=3.0)
    parser.add_argument("--bound-s", type=float, default=30.0)
    parser.add_argument("--clean-check", action="store_true")
    parser.add_argument("--only", type=int, default=None)
    parser.add_argument(
        "--fresh", action="store_true", help="each try a new run, not a resume of the last"
    )
    parser.add_argument("extra", nargs="*", help="after --: more arguments for the command")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.signals.split(",") if k.strip()]
    if args.after_line:
        chosen = [
            Moment(k, args.delay_s, args.after_line) for k in kinds for _ in range(args.moments)
        ]
    else:
        chosen = moments(args.draw, kinds, args.moments, args.span_s)
    tries = stress(
        args.out, chosen, seed=args.draw, command=args.command, profile=args.profile,
        extra=args.extra, bound_s=args.bound_s, clean_check=args.clean_check, only=args.only,
        fresh_each=args.fresh or bool(args.after_line),
    )  # fmt: skip
    result = summary(tries)
    (args.out / "summary.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
