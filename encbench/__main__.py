"""`python -m encbench` and the `encbench` command (pyproject.toml's entry point)."""

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
    except Interrupted as exc:
        print(f"encbench: {exc}", file=sys.stderr)
        sys.exit(Interrupted.exit_code)
    main()


if __name__ == "__main__":
    entry()
