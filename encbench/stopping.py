"""How encbench stops: Ctrl-C (SIGINT), `kill` (SIGTERM) and a closed terminal (SIGHUP, and
the writes to it that then fail) are one request, treated alike wherever it arrives.

- The first request raises Interrupted in the main thread, so every context manager on the
  way up stops what it started.  Interrupted is a BaseException, not an EncbenchError: no
  `except EncbenchError` (a retry, a fallback, a tool whose failure only costs a detail) can
  take a stop for an ordinary failure and carry on.
- While an Interrupted is on its way up (the clean-up: every `finally`, `except` and
  `__exit__` it passes), further signals are ignored, so a second Ctrl-C cannot cut the
  clean-up short.  A signal that comes when no Interrupted is on its way up raises one: if
  the first was lost, the second is not.  And the request stays: `check()`, where a run goes
  forward (a round, a child started), raises it again.
- `held()` marks a few steps that must not be cut in two (a child started but not yet owned
  by anyone who will stop it; a stop not yet at its SIGKILL): a signal inside is noted and
  acted on when the block ends.
- A terminal that closes fails every later write to it with EIO, perhaps before its SIGHUP
  is handled: standard output and error are wrapped so that such a write goes to /dev/null
  and counts as the SIGHUP it is.
- A SIGHUP ignored when encbench started (`nohup encbench run …`) stays ignored: the user
  asked for the run to outlive the terminal.
- An Interrupted raised inside a finalizer, which Python would print and drop, is asked for
  again (sys.unraisablehook); `encbench` itself has the handlers from before its imports.

Signal handlers run in the main thread only; elsewhere these functions do nothing.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, ParamSpec, TextIO, TypeVar

from encbench.errors import Interrupted

# Closing the terminal (SIGHUP) must stop a run as cleanly as Ctrl-C or `kill`.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class _Stop:
    installed: int = 0  # depth of stop_on_signals
    signum: int | None = None  # the first stop asked for
    held: int = 0  # depth of held()
    pending: bool = False  # a stop asked for inside held(), not yet raised
    finished: bool = False  # the command has its exit status: a stop changes nothing now


_stop = _Stop()
P = ParamSpec("P")
R = TypeVar("R")


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _words(signum: int) -> str:
    return f"stopped by {signal.Signals(signum).name}; what was measured is kept"


def within(exc: BaseException | None) -> Interrupted | None:
    """The stop this exception is, or was caused by: a clean-up step that failed while a
    stop ran, or Python's own wrapping of what a signal handler raised (3.11 turns an
    exception from a class's `__set_name__` into a RuntimeError: a stop during an import that
    defines such a class, e.g. ipaddress's cached properties, arrives as one)."""
    todo: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while todo:
        exc = todo.pop()
        if exc is None or id(exc) in seen:
            continue
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        todo += [exc.__context__, exc.__cause__]
    return None


def raised_stop(exc: BaseException) -> Interrupted | None:
    """The stop an exception that reached a command's top is (itself, or the one Python
    wrapped in it: `within`); None for anything else, and for an exit: a `sys.exit` during a
    stop's clean-up carries the stop as its context, and is the exit status already given."""
    return None if isinstance(exc, SystemExit) else within(exc)


def unwinding() -> bool:
    """Whether an Interrupted is on its way up here: the exception being handled (in an
    `except`, a `finally`, an `__exit__`) is one, or was caused by one."""
    return within(sys.exception()) is not None


def _raise_unless_unwinding() -> None:
    if _stop.signum is not None and not unwinding():
        raise Interrupted(_words(_stop.signum))


def _in_whole_step(frame: FrameType | None) -> bool:
    """Whether the signal came inside a function marked `whole` (its hold perhaps not yet
    taken, or already given back)."""
    while frame is not None:
        if frame.f_code is _WHOLE_CODE:
            return True
        frame = frame.f_back
    return False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _stop.finished:
        return
    if _stop.signum is None:
        _stop.signum = signum
    if _stop.held or _in_whole_step(frame):
        _stop.pending = True
        return
    _raise_unless_unwinding()


def _unraisable(hook: Any) -> None:
    """An Interrupted raised inside a finalizer (a __del__, a weakref's callback), where
    Python prints an exception and drops it: the stop is asked for again, to be raised
    where it counts (the handler runs again at the next instant it can)."""
    if isinstance(hook.exc_value, Interrupted) and _stop.signum is not None:
        # From another thread, a moment later: asked for here it would be handled here.  As
        # if the signal came again, to its handler only (nothing where none is installed).
        again = threading.Timer(0.01, _thread.interrupt_main, (_stop.signum,))
        again.daemon = True
        again.start()
        return
    _unraisable_before(hook)


_unraisable_before: Callable[[Any], object] = sys.__unraisablehook__


def _install(previous: Mapping[signal.Signals, Any]) -> None:
    global _unraisable_before
    for sig in STOP_SIGNALS:
        # A SIGHUP ignored at start (nohup) stays ignored.
        if not (sig == signal.SIGHUP and previous[sig] == signal.SIG_IGN):
            signal.signal(sig, _on_signal)
    if sys.unraisablehook is not _unraisable:
        _unraisable_before = sys.unraisablehook
        sys.unraisablehook = _unraisable


def from_the_start(
    before: Mapping[signal.Signals, Any] | None = None, noted: Sequence[int] = ()
) -> None:
    """For `encbench` itself, before its imports (a second or so): a stop then raises
    Interrupted as later, which its entry point turns into exit 130.  `before`: the handlers
    the process started with, where a first handler only `noted` the stops that came while
    this module was imported (encbench/__main__.py); the first of them is raised now."""
    if not _main_thread():
        return
    _install(before or {sig: signal.getsignal(sig) for sig in STOP_SIGNALS})
    if noted and _stop.signum is None:
        _stop.signum = noted[0]
    _raise_unless_unwinding()


def requested() -> str | None:
    """The words of the stop asked for, if any (it may not have been raised yet)."""
    return _words(_stop.signum) if _stop.signum is not None else None


def finish() -> None:
    """The command has its exit status and has said its last line: a stop signal from now
    on is ignored (the process is only exiting)."""
    _stop.finished = True


def check() -> None:
    """Where a run goes forward: raise Interrupted if a stop was asked for and none is on its
    way up (so a stop that was lost, or noted inside held(), is acted on here)."""
    if _stop.installed and not _stop.held and not _stop.finished and _main_thread():
        _raise_unless_unwinding()


@contextlib.contextmanager
def held() -> Iterator[None]:
    """A stop signal inside the block is noted, and raised when the block ends (unless an
    Interrupted is already on its way up)."""
    if not _main_thread():
        yield
        return
    _stop.held += 1
    try:
        yield
    finally:
        _stop.held -= 1
        if not _stop.held and _stop.pending:
            _stop.pending = False
            _raise_unless_unwinding()


def whole(step: Callable[P, R]) -> Callable[P, R]:
    """A step that must not be cut in two, however it is reached (a clean-up in the normal
    course of a run as much as during a stop): a teardown of several parts, a process group's
    stop.  It runs held, from its first instant: a signal that lands in it before its hold is
    taken is noted too (the handler looks for it on the stack)."""

    @functools.wraps(step)
    def held_whole(*args: P.args, **kwargs: P.kwargs) -> R:
        with held():
            return step(*args, **kwargs)

    return held_whole


# Every function `whole` returns runs this one code object: what the handler looks for.
_WHOLE_CODE = whole(lambda: None).__code__


def to_devnull(*fds: int) -> None:
    """Point these descriptors at /dev/null: the terminal they wrote to is gone, and nothing
    more goes to it, nor fails on it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _HangupSafe:
    """Standard output or error whose writes survive a closed terminal: a write that fails
    with EIO points the descriptor at /dev/null, asks for the stop a SIGHUP asks for (unless
    SIGHUP was ignored: nohup), and reports the text written."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _hung_up(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            to_devnull(self._stream.fileno())
        if signal.getsignal(signal.SIGHUP) is _on_signal:
            # Through the kernel, so that it is handled in the main thread whichever thread
            # wrote (rich's refresh thread writes too).
            os.kill(os.getpid(), signal.SIGHUP)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            self._hung_up()
            with contextlib.suppress(OSError):
                self._stream.write(text)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            self._hung_up()
            with contextlib.suppress(OSError):
                self._stream.flush()


@contextlib.contextmanager
def stop_on_signals(to_the_end: bool = False) -> Iterator[None]:
    """For one command: SIGINT, SIGTERM and SIGHUP raise Interrupted as above, and the
    standard streams survive a closed terminal.  On the way out the handlers and streams of
    before are put back and the request is forgotten (tests run many commands in one
    process), unless `to_the_end`: the process exits next, and a default handler put back
    now would let a late SIGHUP or SIGTERM kill it before its exit status is given."""
    if not _main_thread() or _stop.installed:
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    hook = sys.unraisablehook
    streams = (sys.stdout, sys.stderr)
    try:
        _stop.installed += 1
        _install(previous)
        sys.stdout, sys.stderr = (_HangupSafe(s) if s is not None else s for s in streams)
        yield
    finally:
        if to_the_end:
            # Ignored, not only passed over: the interpreter puts back the default action of
            # a signal with a Python handler as it exits, and SIGHUP's or SIGTERM's would
            # then kill it before its exit status is given.
            _stop.finished = True
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)
        else:
            # The handlers first: a signal meanwhile then finds the state it expects.
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sys.unraisablehook = hook
            sys.stdout, sys.stderr = streams
            _stop.installed -= 1
            _stop.signum, _stop.pending, _stop.held, _stop.finished = None, False, 0, False
