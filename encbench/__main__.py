"""`python -m encbench` and the `encbench` command (pyproject.toml's entry point)."""

import signal
import sys

from encbench import stopping
from encbench.errors import Interrupted


def entry() -> None:
    """The CLI, its stop signals caught from the first instant: importing it takes about a
    second, and a Ctrl-C, SIGTERM or closed terminal then ends it as at any other moment
    (exit 130 in one line), before anything is started (encbench/stopping.py)."""
    stopping.from_the_start()
    try:
        from encbench.cli import main

        main()
    except BaseException as exc:  # before the CLI's own handling took over
        stop = None if isinstance(exc, SystemExit) else stopping.within(exc)
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
