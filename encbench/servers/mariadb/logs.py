"""Where each family of the `mariadb` kind keeps the logs scope `all` encrypts (redo, and the
binary log the sandbox's options name `binlog`), as the at-rest proof's raw-file witness
scans them (proof/at_rest.py), and MySQL's own account of them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from encbench.servers.target import Target

REDO_LOG = "ib_logfile0"


@dataclass(frozen=True)
class LogFiles:
    """Where a family's server keeps the logs scope `all` encrypts, as the raw-file witness
    scans them, and the server's own account of them (None: the family has none to give)."""

    redo: str  # a glob under the data directory
    # (log, encrypted per the server) of each log the server reports on.
    states: Callable[[Target], dict[str, bool]] | None = None

    def redo_files(self, datadir: Path) -> list[Path]:
        # MySQL keeps spare redo files (#ib_redoN_tmp) that hold nothing written yet.
        return sorted(p for p in datadir.glob(self.redo) if not p.name.endswith("_tmp"))


def mysql_log_states(server: Target) -> dict[str, bool]:
    """MySQL's own account of its logs: redo encryption on (@@innodb_redo_log_encrypt: its
    setting, which the raw redo files check), every
    undo tablespace encrypted (INNODB_TABLESPACES), and the binary log being written
    encrypted (SHOW BINARY LOGS' Encrypted of the newest: the first, written by
    --initialize before the keyring could load, stays plain: installs.initialize_options)."""
    (redo,) = server.query("SELECT @@GLOBAL.innodb_redo_log_encrypt")[0]
    undo = server.query(
        "SELECT ENCRYPTION FROM information_schema.INNODB_TABLESPACES WHERE SPACE_TYPE = 'Undo'"
    )
    binlogs = server.query("SHOW BINARY LOGS")
    return {
        "redo": str(redo) in ("1", "ON"),
        "undo": bool(undo) and all(str(e) == "Y" for (e,) in undo),
        "binlog": bool(binlogs) and str(binlogs[-1][2]).lower() == "yes",
    }


def binary_logs(datadir: Path) -> list[Path]:
    """The binary log files (binlog.NNNNNN), oldest first: not MariaDB 11.4+'s GTID index
    beside each (binlog.NNNNNN.idx), which holds positions, never the events."""
    return sorted(p for p in datadir.glob("binlog.[0-9]*") if re.fullmatch(r"binlog\.\d+", p.name))


MARIADB_LOGS = LogFiles(REDO_LOG)
MYSQL_LOGS = LogFiles("#innodb_redo/#ib_redo[0-9]*", mysql_log_states)
