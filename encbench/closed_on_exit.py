"""A context manager whose exit, on any exception or none, is its own `close()`: the studies'
servers and table sets, torn down the same way whether a run ends or fails."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosedOnExit:
    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError
