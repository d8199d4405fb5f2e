"""The server's own counters over a window, read without changing anything on it: one
connection (no TLS: the harness's reads are no handshakes of the server's), SHOW GLOBAL
VARIABLES at both ends, SHOW GLOBAL STATUS every 10 s — so that the rates' variation over the
window is known, not only their mean — and, where the user gives ssh, the server process's
CPU on its host at the same moments (servers/remote_cpu.py).

The window's own traffic is taken out: each reading also asks its session's Bytes_sent and
Bytes_received (SHOW SESSION STATUS), whose growth is the harness's share of the server's
(a SHOW GLOBAL STATUS answer is tens of KiB: on a quiet server most of its bytes).  The one
connection is opened before the first reading, so Connections counts none of the window's.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Protocol

import pymysql

from encbench.errors import BadInput, EncbenchError
from encbench.report.models import Model
from encbench.servers.mariadb import prerequisites
from encbench.servers.mariadb.user_server import UserServer

LOGIN_DENIED = 1045  # ER_ACCESS_DENIED_ERROR: the user or its password
SAMPLE_S = 10.0  # one reading, and one line of progress, per 10 s
MIN_SECONDS = 10
MAX_SECONDS = 24 * 3600

# Counters without which there is nothing to estimate; every MariaDB and MySQL has them.
REQUIRED = (
    "Uptime",
    "Innodb_pages_read",
    "Innodb_pages_written",
    "Connections",
    "Bytes_sent",
    "Bytes_received",
)
# Counted where the server has them: MySQL counts no binary log bytes and no pages through
# the cipher; a server without TLS has no Ssl_* counters.
OPTIONAL = (
    "Innodb_buffer_pool_reads",
    "Innodb_os_log_written",
    "Binlog_bytes_written",
    "Ssl_accepts",
    "Ssl_finished_accepts",
    "Innodb_num_pages_decrypted",
    "Innodb_num_pages_encrypted",
)
# What the estimate reads of the server's settings: what it encrypts already, and its cipher.
# MariaDB's names, then MySQL's for the same things (a server has only its own).
VARIABLES = (
    "version",
    "version_comment",
    "pid_file",
    "innodb_encrypt_tables",
    "innodb_encrypt_log",
    "encrypt_binlog",
    "default_table_encryption",
    "innodb_redo_log_encrypt",
    "binlog_encryption",
    "log_bin",
    "have_ssl",
    "ssl_cert",
    "tls_version",
    "require_secure_transport",
    "file_key_management_encryption_algorithm",
    "innodb_page_size",
)


class Rates(Model):
    """One interval of the window: each counter's growth per second (None: the server does
    not count it) and the server's CPU in cores (None: not read)."""

    seconds: float
    pages_read: float
    pages_written: float
    buffer_pool_reads: float | None
    redo_bytes: float | None
    binlog_bytes: float | None
    connections: float
    tls_handshakes: float | None
    bytes: float  # sent and received, less the window's own
    pages_decrypted: float | None
    pages_encrypted: float | None
    server_cores: float | None = None


class Sample(Model):
    """One reading: when (monotonic seconds), the counters, the harness's own bytes, and the
    server's CPU seconds so far where read."""

    at_s: float
    counters: dict[str, int]
    own_bytes: int
    cpu_s: float | None


class Window(Model):
    """The whole window: its settings at the start, what changed by its end, its intervals."""

    started_at: str  # UTC, ISO 8601
    seconds: float
    variables: dict[str, str]
    changed: dict[str, tuple[str, str]]  # a variable set during the window: before, after
    intervals: list[Rates]
    missing: list[str]  # optional counters this server does not have
    server_cpu: str  # where the server's CPU was read, or why it was not
    host_cores: int | None = None  # the server's host's CPUs, where read over ssh


class Session(Protocol):
    def status(self) -> dict[str, str]: ...
    def variables(self) -> dict[str, str]: ...
    def own_bytes(self) -> int: ...


class CpuReader(Protocol):
    def read_s(self) -> float: ...


class StatusSession:
    """The one connection of a window, as a Session."""

    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def _rows(self, sql: str) -> dict[str, str]:
        self.cursor.execute(sql)
        return {str(name): str(value) for name, value in self.cursor.fetchall()}

    def status(self) -> dict[str, str]:
        return self._rows("SHOW GLOBAL STATUS")

    def variables(self) -> dict[str, str]:
        everything = self._rows("SHOW GLOBAL VARIABLES")
        return {k: everything[k] for k in VARIABLES if k in everything}

    def own_bytes(self) -> int:
        rows = self._rows("SHOW SESSION STATUS LIKE 'Bytes\\_%'")
        return int(rows.get("Bytes_sent", 0)) + int(rows.get("Bytes_received", 0))

    def grants(self) -> list[str]:
        """Only where a counter is missing: whether PROCESS would show it."""
        self.cursor.execute("SHOW GRANTS")
        return [str(row[0]) for row in self.cursor.fetchall()]


def login_refused(server: UserServer, exc: BadInput) -> BadInput:
    """A refused login, with the user the estimate needs: a login and nothing more."""
    cause = exc.__cause__
    code = cause.args[0] if isinstance(cause, pymysql.MySQLError) and cause.args else None
    if code != LOGIN_DENIED:
        return exc
    user = server.where.user
    return BadInput(
        f"{server.name} refused {user}'s login ({cause.args[-1] if cause else exc}): check the "
        "password (MYSQL_PWD or --defaults-extra-file), or create the user — reading status "
        f"and variables needs no privilege: CREATE USER '{user}'@'THIS_HOST' IDENTIFIED BY '…'"
    )


@contextlib.contextmanager
def session(server: UserServer) -> Iterator[StatusSession]:
    """One connection for the whole window; a refused login says how to create the user."""
    try:
        with server.cursor(timeout_s=server.status_timeout_s) as cur:
            yield StatusSession(cur)
    except BadInput as exc:
        raise login_refused(server, exc) from exc.__cause__


def check_counters(status: dict[str, str], grants: Callable[[], list[str]], user: str) -> None:
    """The counters the estimate needs are there; where they are not and the user lacks
    PROCESS (a server that shows InnoDB's counters only with it), the GRANT that fixes it."""
    missing = [name for name in REQUIRED if name not in status]
    if not missing:
        return
    on_all = prerequisites.privileges_on([g for g in grants() if " ON *.* " in g], "*")
    if "PROCESS" not in on_all:
        raise BadInput(
            f"the server shows no {', '.join(missing)} to this user: GRANT PROCESS ON *.* TO "
            f"'{user}'@'THIS_HOST'"
        )
    raise BadInput(
        f"the server counts no {', '.join(missing)}: the estimate needs MariaDB's or MySQL's "
        "InnoDB status counters"
    )


def _counters(status: dict[str, str]) -> dict[str, int]:
    found = {}
    for name in (*REQUIRED, *OPTIONAL):
        try:
            found[name] = int(float(status[name]))
        except (KeyError, ValueError):
            continue
    return found


def read_sample(session: Session, cpu: CpuReader | None, clock: Callable[[], float]) -> Sample:
    counters = _counters(session.status())
    own = session.own_bytes()
    return Sample(
        at_s=clock(), counters=counters, own_bytes=own, cpu_s=cpu.read_s() if cpu else None
    )


def interval_rates(a: Sample, b: Sample) -> Rates:
    """Each counter's growth per second between two readings."""
    seconds = b.at_s - a.at_s
    if seconds <= 0:
        raise EncbenchError("two readings of the server's counters at the same moment")
    if b.counters["Uptime"] < a.counters["Uptime"]:
        raise EncbenchError(
            "the server restarted during the window (its Uptime went back): run the estimate again"
        )

    def per_s(name: str) -> float | None:
        if name not in a.counters or name not in b.counters:
            return None
        return max(b.counters[name] - a.counters[name], 0) / seconds

    def required(name: str) -> float:
        value = per_s(name)
        assert value is not None, f"{name} is required (check_counters)"
        return value

    moved = required("Bytes_sent") + required("Bytes_received")
    own = (b.own_bytes - a.own_bytes) / seconds
    cores = (b.cpu_s - a.cpu_s) / seconds if a.cpu_s is not None and b.cpu_s is not None else None
    return Rates(
        seconds=seconds,
        pages_read=required("Innodb_pages_read"),
        pages_written=required("Innodb_pages_written"),
        buffer_pool_reads=per_s("Innodb_buffer_pool_reads"),
        redo_bytes=per_s("Innodb_os_log_written"),
        binlog_bytes=per_s("Binlog_bytes_written"),
        connections=required("Connections"),
        tls_handshakes=per_s("Ssl_finished_accepts"),
        bytes=max(moved - own, 0.0),
        pages_decrypted=per_s("Innodb_num_pages_decrypted"),
        pages_encrypted=per_s("Innodb_num_pages_encrypted"),
        server_cores=cores,
    )


def progress_line(elapsed_s: float, seconds: float, rates: Rates) -> str:
    line = (
        f"estimate: {elapsed_s:.0f} s of {seconds:.0f}: {rates.pages_read:,.0f} pages read/s, "
        f"{rates.pages_written:,.0f} written/s, {rates.connections:,.1f} connections/s, "
        f"{rates.bytes / (1 << 20):,.2f} MiB/s sent and received"
    )
    if rates.server_cores is not None:
        line += f", server CPU {rates.server_cores:.2f} cores"
    return line


def sample_window(
    session: Session,
    seconds: float,
    cpu: CpuReader | None,
    cpu_words: str,
    progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Window:
    """`seconds` of readings, one every ~10 s (the window cut into equal intervals), with a
    line of progress after each."""
    count = max(1, round(seconds / SAMPLE_S))
    step = seconds / count
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    before = session.variables()
    samples = [read_sample(session, cpu, clock)]
    start = samples[0].at_s
    intervals = []
    for i in range(1, count + 1):
        sleep(max(0.0, start + i * step - clock()))
        samples.append(read_sample(session, cpu, clock))
        intervals.append(interval_rates(samples[-2], samples[-1]))
        progress(progress_line(samples[-1].at_s - start, seconds, intervals[-1]))
    after = session.variables()
    changed = {k: (before[k], after.get(k, "")) for k in before if after.get(k) != before[k]}
    return Window(
        started_at=started_at,
        seconds=samples[-1].at_s - start,
        variables=before,
        changed=changed,
        intervals=intervals,
        missing=[name for name in OPTIONAL if name not in samples[0].counters],
        server_cpu=cpu_words,
    )


def check_seconds(seconds: int) -> None:
    if not MIN_SECONDS <= seconds <= MAX_SECONDS or not math.isfinite(seconds):
        raise BadInput(
            f"--seconds {seconds}: give {MIN_SECONDS} to {MAX_SECONDS} (one reading per "
            f"{SAMPLE_S:.0f} s; the default 60 gives six)"
        )
