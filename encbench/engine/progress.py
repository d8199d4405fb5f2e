"""What a person watching a run sees: one line per finished cell (like pyperf's) and, on a
terminal, a live bar with the current cell, round, interval so far and an ETA."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class RunProgress:
    def __init__(self, total_s: float, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        # Refresh once a second: the display must cost nothing measurable during a run.
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            refresh_per_second=1,
            transient=True,
        )
        self._task = self._progress.add_task("starting", total=total_s)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def log(self, message: str) -> None:
        self._progress.console.print(message, highlight=False, soft_wrap=True)

    def status(self, description: str) -> None:
        self._progress.update(self._task, description=description)

    def set_total(self, seconds: float) -> None:
        self._progress.update(self._task, total=seconds)

    def set_completed(self, seconds: float) -> None:
        self._progress.update(self._task, completed=seconds)
