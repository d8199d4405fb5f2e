"""A context manager whose exit, on any exception or none, is its own `close()`: the studies'
servers and table sets, torn down the same way whether a run ends, fails or is stopped.  A
stop that comes during the close is raised once it is done: a close cut in two would leave
half of what it tears down."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from encbench import stopping


class ClosedOnExit:
    def __enter__(self) -> Self:
        return self

    @stopping.whole
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError
