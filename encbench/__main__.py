"""`python -m encbench` and the `encbench` command (pyproject.toml's entry point)."""

import signal
import sys
from types import FrameType


def _stopped_early(signum: int, frame: FrameType | None) -> None:
    # Nothing is started yet: a stop only ends the process, as a stop does (exit 130).
    sys.exit(130)


def entry() -> None:
    """The CLI, with its stop signals caught from the first instant: importing it takes
    about a second, and a Ctrl-C, SIGTERM or closed terminal then must end it as at any other
    moment (exit 130, no traceback) until its own handlers take over (encbench/stopping.py).
    A SIGHUP ignored at start (nohup) stays ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if not (sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN):
            signal.signal(sig, _stopped_early)
    from encbench.cli import main

    main()


if __name__ == "__main__":
    entry()
