"""Stopping, with the real handlers in this process (encbench/stopping.py): SIGINT, SIGTERM,
SIGHUP and a write to a closed terminal are one stop, raised as Interrupted (exit 130,
"stopped by …"); a second signal during the clean-up is ignored, one after a lost stop is
not; a stop inside a held block is raised when it ends, whichever signal it was; and no
handler of failures can catch it.

Real runs stopped at random moments, by each signal and by a real pty hung up, are
tests/integration/test_stop_stress.py (and benchmarks/stop_stress.py at full size)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from encbench import proc, stopping
from encbench.errors import EncbenchError, Interrupted
from encbench.stopping import STOP_SIGNALS, stop_on_signals

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def handlers() -> dict[int, object]:
    return {s: signal.getsignal(s) for s in STOP_SIGNALS}


def test_the_three_stop_signals_are_closing_the_terminal_ctrl_c_and_kill() -> None:
    assert set(STOP_SIGNALS) == {signal.SIGHUP, signal.SIGINT, signal.SIGTERM}


def test_a_stop_is_no_error_that_a_handler_of_failures_could_catch() -> None:
    assert not issubclass(Interrupted, Exception)
    with pytest.raises(Interrupted), stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)
        except EncbenchError:  # a retry or a fallback, as the code has many
            pytest.fail("a stop was taken for a failure")


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_stop_signal_raises_and_a_second_one_does_not_cut_the_clean_up_short(
    sig: signal.Signals,
) -> None:
    before = handlers()
    cleaned = []
    with stop_on_signals():
        assert all(h is not before[s] for s, h in handlers().items())
        with pytest.raises(Interrupted) as caught:
            try:
                os.kill(os.getpid(), sig)
                time.sleep(10)  # the handler raises in the main thread, cutting this short
            finally:
                # The clean-up: every stop signal, a second of the same kind too, is ignored.
                for other in SIGNALS:
                    os.kill(os.getpid(), other)
                    time.sleep(0.01)
                cleaned.append(True)
        assert str(caught.value) == f"stopped by {sig.name}; what was measured is kept"
        assert caught.value.exit_code == 130
        # Still ours, all three: no signal is left ignored (a SIGHUP in a held block was).
        assert all(h is not signal.SIG_IGN for h in handlers().values())
    assert cleaned == [True]
    assert handlers() == before


def test_a_stop_that_was_lost_is_raised_again_by_the_next_signal_and_by_check() -> None:
    with stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(10)
        except BaseException:  # swallowed, as a bug would
            pass
        with pytest.raises(Interrupted):
            stopping.check()  # where a run goes forward
        with pytest.raises(Interrupted, match="stopped by SIGINT"):
            os.kill(os.getpid(), signal.SIGHUP)  # the first stop's words: it is one stop
            time.sleep(10)


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_stop_inside_a_held_block_is_raised_when_it_ends(sig: signal.Signals) -> None:
    finished = []
    with stop_on_signals():
        with pytest.raises(Interrupted), stopping.held():
            os.kill(os.getpid(), sig)
            time.sleep(0.2)  # not cut short
            finished.append(True)
        assert finished == [True]
        assert all(h is not signal.SIG_IGN for h in handlers().values())


def test_a_stop_during_stop_group_waits_until_the_child_is_killed() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(15, 1); time.sleep(30)"],
        start_new_session=True,
    )
    time.sleep(0.3)
    sender = subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -HUP {os.getpid()}"])
    try:
        with stop_on_signals(), pytest.raises(Interrupted, match="SIGHUP"):
            proc.stop_group(child, ((signal.SIGTERM, 1.5),))
        assert child.poll() == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()
        sender.wait()


def test_a_stop_during_a_childs_start_stops_that_child(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[subprocess.Popen[str]] = []

    class SignalledAtStart(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)
            os.kill(os.getpid(), signal.SIGTERM)  # between the start and its owner's `try`
            time.sleep(0.05)

    monkeypatch.setattr(proc.subprocess, "Popen", SignalledAtStart)
    with stop_on_signals(), pytest.raises(Interrupted):
        proc.run(["sleep", "30"], phase="test", timeout_s=60)
    assert started and started[0].returncode is not None


def test_a_run_asked_to_stop_starts_no_child() -> None:
    with stop_on_signals():
        stopping._stop.signum = signal.SIGTERM  # asked for, the Interrupted lost
        with pytest.raises(Interrupted):
            proc.run(["true"], phase="test", timeout_s=10)
        assert stopping.requested() == "stopped by SIGTERM; what was measured is kept"
    assert stopping.requested() is None


def test_a_write_to_a_closed_terminal_is_the_sighup_it_means(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    master, slave = os.openpty()
    terminal = open(slave, "w", buffering=1)  # noqa: SIM115
    monkeypatch.setattr(sys, "stderr", terminal)
    try:
        with stop_on_signals(), pytest.raises(Interrupted, match="SIGHUP"):
            print("before", file=sys.stderr)
            os.close(master)  # the terminal's window closed
            with pytest.raises(OSError) as direct:
                os.write(slave, b"x")
            assert direct.value.errno == errno.EIO
            print("after", file=sys.stderr)  # no OSError: the stop instead
            time.sleep(10)
        # Later writes go nowhere, and fail no clean-up.
        os.write(slave, b"to /dev/null")
        assert os.readlink(f"/proc/self/fd/{slave}") == "/dev/null"
    finally:
        terminal.close()


def test_a_sighup_ignored_at_start_stays_ignored_nohup() -> None:
    saved = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
            assert stopping.requested() is None
            with pytest.raises(Interrupted):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(10)
    finally:
        signal.signal(signal.SIGHUP, saved)


def test_the_last_net_cleans_exactly_its_own_records() -> None:
    me = proc.current_run()
    other_live = proc.RunIdentity("other", 1, proc.start_ticks(1))
    dead = proc.RunIdentity("dead", me.pid, (me.start_ticks or 0) + 1)  # a recycled pid
    # A command's own net: only its own records, live as its run is.
    assert proc.to_clean(me, False, only=me)
    assert not proc.to_clean(other_live, False, only=me)
    assert not proc.to_clean(dead, False, only=me)
    # `encbench clean`: dead runs', and live ones' only when asked.
    assert proc.to_clean(dead, False, only=None)
    assert not proc.to_clean(me, False, only=None)
    assert proc.to_clean(me, True, only=None)


def test_a_stop_raised_inside_a_finalizer_is_raised_again_outside() -> None:
    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler runs here, and Python would drop what it raises

    with stop_on_signals(), pytest.raises(Interrupted, match="SIGTERM"):
        Finalized()  # dropped at once
        time.sleep(10)


def wait_until_caught(pid: int, sig: signal.Signals, timeout_s: float = 30.0) -> None:
    """Until the process has a handler for `sig` (its SigCgt mask in /proc)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
        if int(mask, 16) & (1 << (sig - 1)):
            return
        time.sleep(0.005)
    raise AssertionError(f"pid {pid} caught no {sig.name} within {timeout_s:g} s")


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_stop_while_encbench_imports_itself_exits_130_in_one_line(sig: signal.Signals) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "profiles"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # As a terminal's shell starts it, whatever this test's process ignores.
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    # Its handlers come first, then imports of about a second: the signal goes as soon as
    # the kernel shows them in place (SIGHUP, the last installed; the interpreter catches
    # SIGINT itself from its start) — a fixed wait lost that race on a loaded machine, where
    # the interpreter's own start outlasted it and the default action killed the child.
    wait_until_caught(child.pid, stopping.STOP_SIGNALS[-1])
    child.send_signal(sig)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert err == f"encbench: stopped by {sig.name}; what was measured is kept\n"
    assert out == ""


def test_a_stop_inside_a_whole_step_lets_every_part_of_it_run() -> None:
    parts = []

    @stopping.whole
    def teardown() -> None:  # two parts, each held on its own (process groups' stops)
        with stopping.held():
            os.kill(os.getpid(), signal.SIGTERM)  # in a normal course: nothing on its way up
            time.sleep(0.05)
        parts.append("first")
        with stopping.held():
            parts.append("second")

    with stop_on_signals(), pytest.raises(Interrupted):
        teardown()
    assert parts == ["first", "second"]


def test_a_stop_that_lands_in_a_whole_step_before_its_hold_waits_for_its_end() -> None:
    parts = []

    @stopping.whole
    def teardown() -> None:
        stopping._stop.held -= 1  # as if the signal came before the hold was taken
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler runs here and finds the step on the stack
        finally:
            stopping._stop.held += 1
        parts.append("done")

    with stop_on_signals(), pytest.raises(Interrupted):
        teardown()
    assert parts == ["done"]


EARLY_STOP = """
import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN if sys.argv[2] == "nohup" else signal.SIG_DFL)
import encbench.__main__ as main  # its first lines note a stop; its imports follow
os.kill(os.getpid(), getattr(signal, sys.argv[1]))  # a stop before entry() takes over
print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN, flush=True)
main.entry()
"""


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_stop_before_encbench_s_own_handlers_is_noted_and_raised_when_they_take_over(
    sig: signal.Signals,
) -> None:
    child = subprocess.run(
        [sys.executable, "-c", EARLY_STOP, sig.name, "terminal"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (child.returncode, child.stdout) == (130, "False\n"), child.stderr
    assert child.stderr == f"encbench: stopped by {sig.name}; what was measured is kept\n"


def test_a_sighup_ignored_before_encbench_s_first_line_stays_ignored() -> None:
    child = subprocess.run(
        [sys.executable, "-c", EARLY_STOP, "SIGTERM", "nohup"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (child.returncode, child.stdout) == (130, "True\n"), child.stderr


WRAPPED_STOP = """
import os, signal
from encbench import stopping
stopping.from_the_start()
from encbench.__main__ import entry


class Stops:
    def __set_name__(self, owner, name):
        os.kill(os.getpid(), signal.SIGTERM)  # lands here: Python 3.11 wraps it


def main():
    class Defined:  # as an import that defines a class with a descriptor
        attribute = Stops()


import encbench.cli
encbench.cli.main = lambda: main()
entry()
"""


def test_a_stop_that_python_wrapped_in_another_error_still_exits_130_in_one_line() -> None:
    """A stop raised inside a class's __set_name__ (an import defining ipaddress's cached
    properties, say) reaches the entry point as a RuntimeError caused by it: still a stop."""
    child = subprocess.run(
        [sys.executable, "-c", WRAPPED_STOP], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 130, child.stderr
    assert child.stderr == "encbench: stopped by SIGTERM; what was measured is kept\n"


def test_within_finds_the_stop_behind_an_error_that_wraps_it() -> None:
    stop = Interrupted("stopped by SIGTERM; what was measured is kept")
    try:
        raise RuntimeError("Error calling __set_name__") from stop
    except RuntimeError as wrapped:
        assert stopping.within(wrapped) is stop
    assert stopping.within(RuntimeError("no stop")) is None


def test_an_exit_during_a_stops_clean_up_is_the_exit_not_the_stop_again() -> None:
    stop = Interrupted("stopped by SIGINT; what was measured is kept")
    try:
        try:
            raise stop
        except Interrupted:
            raise SystemExit(130) from None  # the status given; the stop is its context
    except SystemExit as exiting:
        assert exiting.__context__ is stop
        assert stopping.raised_stop(exiting) is None
    try:
        raise RuntimeError("Error calling __set_name__") from stop
    except RuntimeError as wrapped:
        assert stopping.raised_stop(wrapped) is stop
