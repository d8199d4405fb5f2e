"""`python -m encbench` and the `encbench` command (pyproject.toml's entry point)."""

# Before any other import, a stop signal is only noted, for entry() to act on: importing even
# encbench.stopping takes tens of milliseconds (dataclasses, inspect), and a Ctrl-C inside
# them would otherwise be Python's KeyboardInterrupt, a traceback and exit -2.  A SIGHUP
# ignored at start (`nohup encbench …`) stays ignored.
import signal

_EARLY_STOPS: list[int] = []  # stop signals that came before encbench's own handlers
_HANDLERS_BEFORE = {
    sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
}


def _note(signum: int, frame: object) -> None:
    _EARLY_STOPS.append(signum)


for _sig, _handler in _HANDLERS_BEFORE.items():
    if not (_sig == signal.SIGHUP and _handler == signal.SIG_IGN):
        signal.signal(_sig, _note)

import sys  # noqa: E402  (after the handlers, on purpose)

from encbench import stopping  # noqa: E402
from encbench.errors import Interrupted  # noqa: E402


def entry() -> None:
    """The CLI, its stop signals caught from the first instant: importing it takes about a
    second, and a Ctrl-C, SIGTERM or closed terminal then ends it as at any other moment
    (exit 130 in one line), before anything is started (encbench/stopping.py)."""
    try:
        stopping.from_the_start(_HANDLERS_BEFORE, _EARLY_STOPS)
        from encbench.cli import main

        main()
    except BaseException as exc:  # before the CLI's own handling took over
        stop = stopping.raised_stop(exc)
        if stop is None:
            raise
        stopping.finish()
        for sig in stopping.STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        try:
            print(f"encbench: {stop}", file=sys.stderr, flush=True)
        except OSError:
            stopping.to_devnull(1, 2)
        sys.exit(Interrupted.exit_code)


if __name__ == "__main__":
    entry()
