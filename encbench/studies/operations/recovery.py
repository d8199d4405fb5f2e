"""What InnoDB's error log says about a crash recovery (MariaDB 10.11):

    InnoDB: Starting crash recovery from checkpoint LSN=50158
    InnoDB: End of log at LSN=9977567
    InnoDB: To recover: 288 pages

The redo applied is the log from the checkpoint to its end, in bytes (an LSN counts bytes of
the log).  tests/golden/operations/ keeps a real log."""

from __future__ import annotations

import re
from dataclasses import dataclass

from encbench.errors import ProofError

_CHECKPOINT = re.compile(r"Starting crash recovery from checkpoint LSN=(\d+)")
_END = re.compile(r"End of log at LSN=(\d+)")
_PAGES = re.compile(r"To recover: (\d+) pages")


@dataclass(frozen=True)
class Recovery:
    checkpoint_lsn: int
    end_lsn: int
    pages: int

    @property
    def redo_bytes(self) -> int:
        return self.end_lsn - self.checkpoint_lsn


def parse(log: str, server: str = "server") -> Recovery:
    """The last crash recovery in this part of the error log.  A start-up without one (the
    server was not crashed, or InnoDB found nothing to recover) measured no recovery: that is
    a failed run, not a fast one."""
    checkpoints = _CHECKPOINT.findall(log)
    ends = _END.findall(log)
    if not checkpoints or not ends:
        raise ProofError(
            f"the {server} server started without a crash recovery (no 'Starting crash "
            "recovery' and 'End of log' in its error log): nothing to time"
        )
    pages = _PAGES.findall(log)
    return Recovery(int(checkpoints[-1]), int(ends[-1]), int(pages[-1]) if pages else 0)
