"""Sampling a running server with the real `perf`: can it sample here, a recorder around one
run, the report as text, and the calibration of the cipher core on `openssl speed`.

`perf record -e cpu-clock -F HZ -p PID` (no call graphs: the groups are by the sampled
function itself, and -g would multiply the data) runs from just before sysbench starts until
SIGINT just after it ends, when perf writes its file and exits.  It is started like every
child (own process group, the run's owner marker, so `encbench clean` finds one a killed run
left) and stopped by its pid.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from encbench import proc
from encbench.capacity.parse import FULL_IA32CAP, OPENSSL
from encbench.errors import EncbenchError, ToolError

PERF = "perf"
PERF_FIX = "apt-get install linux-perf (or sudo scripts/setup-test-extras.sh)"
SAMPLE_HZ = 999  # not a multiple of the kernel's tick, so samples do not lock onto it
PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")


def perf_path() -> str | None:
    return proc.which(PERF)


def why_it_cannot_sample(workdir: Path) -> str | None:
    """None when `perf record -e cpu-clock true` works here; else why not, in words (the
    report prints it as the reason the profile is missing)."""
    if perf_path() is None:
        return f"perf is not installed ({PERF_FIX})"
    out = workdir / "perf-probe.data"
    try:
        result = proc.run(
            [PERF, "record", "-q", "-e", "cpu-clock", "-o", str(out), "--", "true"],
            phase="perf probe",
            timeout_s=30,
            check=False,
        )
    except EncbenchError as exc:
        return f"perf could not be run: {exc}"
    finally:
        out.unlink(missing_ok=True)
    if result.returncode == 0:
        return None
    paranoid = PARANOID.read_text().strip() if PARANOID.exists() else "unknown"
    last = (result.stdout.strip().splitlines() or ["no output"])[-1]
    return (
        f"`perf record -e cpu-clock` failed here (kernel.perf_event_paranoid = {paranoid}; "
        f"perf said: {last})"
    )


@contextmanager
def recording(pid: int, data: Path, log: Path, hz: int = SAMPLE_HZ) -> Iterator[None]:
    """Sample `pid` (all its threads) while the body runs."""
    argv = [PERF, "record", "-e", "cpu-clock", "-F", str(hz), "-p", str(pid), "-o", str(data)]
    process = proc.spawn(argv, phase="cpu profile", log=log, hint=PERF_FIX)
    try:
        _wait_attached(process, data, argv, log)
        yield
    except BaseException:
        proc.stop_group(process, proc.TOOL_STOP)
        raise
    # SIGINT: perf stops sampling, writes the file's index and exits.
    proc.stop_group(process, ((signal.SIGINT, 30.0),))
    if process.returncode not in (0, -signal.SIGINT, 130) or not data.exists():
        raise ToolError(
            "perf record did not finish cleanly",
            argv=argv,
            returncode=process.returncode,
            phase="cpu profile",
            tail=proc.tail(log),
        )


def _wait_attached(process: subprocess.Popen[str], data: Path, argv: list[str], log: Path) -> None:
    """perf writes its file's header once its events are open on every thread of the pid."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ToolError(
                "perf record exited at start", argv=argv, phase="cpu profile", tail=proc.tail(log)
            )
        if data.exists() and data.stat().st_size > 0:
            time.sleep(0.1)
            return
        time.sleep(0.02)
    proc.stop_group(process, proc.TOOL_STOP)
    raise ToolError("perf record did not start within 15 s", argv=argv, phase="cpu profile")


def report_text(data: Path, out: Path) -> str:
    """The report the parser reads (servers/mariadb/cpu_groups.py), kept beside the data."""
    proc.run(
        [PERF, "report", "-i", str(data), "--stdio", "--no-children", "-n", "--sort", "dso,sym"],
        phase="cpu profile",
        timeout_s=300,
        stdout_path=out,
        stderr_path=out.with_suffix(".err"),
    )
    return out.read_text(errors="replace")


def calibrate(cipher: str, direction: str, workdir: Path) -> str:
    """`perf report` of `openssl speed -evp CIPHER` at 16 KiB for one second: where this
    libcrypto's cipher core lies (servers/mariadb/cpu_groups.py CoreRanges)."""
    data = workdir / f"calibrate-{cipher}-{direction}.data"
    argv = [PERF, "record", "-q", "-e", "cpu-clock", "-F", str(SAMPLE_HZ), "-o", str(data), "--"]
    argv += [OPENSSL, "speed", "-seconds", "1", "-bytes", "16384"]
    argv += ["-decrypt"] if direction == "decrypt" else []
    argv += ["-evp", cipher]
    proc.run(
        argv,
        phase="cpu profile calibration",
        timeout_s=60,
        stdout_path=workdir / f"calibrate-{cipher}-{direction}.log",
        env={"OPENSSL_ia32cap": FULL_IA32CAP},
    )
    text = report_text(data, data.with_suffix(".txt"))
    data.unlink(missing_ok=True)
    return text
