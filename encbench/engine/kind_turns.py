"""One kind's servers up at a time, in a study that measures several kinds with one runner:
the cells of a kind come together (the definition orders them so), and the servers of the
kind measured before are stopped and removed before the next kind's start, so that each kind
runs where it would alone.  The runner says how a kind's servers come up (`open`, given the
stack that takes them down); `close` takes the last kind's down at the end of the run, or on
any exit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable


class KindTurns:
    def __init__(self) -> None:
        self.kind: str | None = None  # the kind whose servers are up
        self._stack: contextlib.ExitStack | None = None

    def turn_to(self, kind: str, open_: Callable[[contextlib.ExitStack], None]) -> None:
        """The kind's servers up (those of the kind before them taken down first); nothing
        where they are up already."""
        if kind == self.kind:
            return
        self.close()
        self._stack = stack = contextlib.ExitStack()
        open_(stack)
        self.kind = kind

    def close(self) -> None:
        """The servers of the kind measured last taken down (nothing where none are up)."""
        stack, self._stack, self.kind = self._stack, None, None
        if stack is not None:
            stack.close()
