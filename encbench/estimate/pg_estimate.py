"""`encbench estimate --target postgresql://USER@HOST:PORT/`: PostgreSQL's counters over the
window (servers/postgresql/counters.py, one connection per reading, every 10 s) × the units of the
filesystem layer (estimate/pg_units.py), in the same report as a MariaDB target's.

The causes are MariaDB's (model.CAUSES) as PostgreSQL counts them:

  table reads     blks_read            × fs block read
  table writes    blocks written       × fs block written
  WAL             wal_bytes ÷ 8 KiB    × fs block written   (scope all)
  TLS handshakes  sessions             × handshake
  TLS bytes       not counted: PostgreSQL keeps no bytes per connection

PostgreSQL has no encryption at rest of its own: what it would pay is a filesystem's (fscrypt
is what encbench measures), which encrypts the whole data directory, WAL included — scope
`all` is what fscrypt of the data directory costs.  Each reading is one short connection of
encbench's, taken out of `sessions` (one per interval).  Nothing is changed on the server."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from encbench.errors import BadInput, EncbenchError
from encbench.estimate import model, report
from encbench.estimate.counters import SAMPLE_S, Rates, Window
from encbench.estimate.model import Cause
from encbench.estimate.rescale import Resolved
from encbench.profiles.profile import TargetSpec
from encbench.servers.postgresql import KIND
from encbench.servers.postgresql import counters as pg_counters
from encbench.servers.postgresql import target as pg_target
from encbench.servers.postgresql.counters import Snapshot

KIND_NAME = KIND.name  # the targets this module reads
BLOCK_BYTES = 8192
OWN_SESSIONS_PER_INTERVAL = 1  # the reading's own connection
NOT_AT_REST = (
    "unknown to PostgreSQL: it has no encryption of its own (a filesystem's, such as "
    "fscrypt, is below it)"
)
FILESYSTEM_UNITS = frozenset({"fs_block_read", "fs_block_written"})
UNITS = FILESYSTEM_UNITS | {"handshake"}

_BY_KEY = {c.key: c for c in model.CAUSES}


def _cause(key: str, **changes: object) -> Cause:
    return dataclasses.replace(_BY_KEY[key], **changes)  # type: ignore[arg-type]


def _wal_blocks(r: Rates) -> float | None:
    return None if r.redo_bytes is None else r.redo_bytes / BLOCK_BYTES


def _none(_: Rates) -> float | None:
    return None


# The rates are kept in counters.Rates' fields: pages_read is blks_read, pages_written the
# blocks written, redo_bytes wal_bytes, connections sessions.
CAUSES: tuple[Cause, ...] = (
    _cause("table_reads", counted_as="blks_read", unit="fs_block_read", rate_unit="blocks/s"),
    _cause(
        "table_writes",
        counted_as="buffers_checkpoint + buffers_clean + buffers_backend",
        unit="fs_block_written",
        rate_unit="blocks/s",
    ),
    _cause(
        "redo_log",
        label="WAL",
        counted_as="wal_bytes ÷ 8 KiB",
        unit="fs_block_written",
        rate_unit="blocks/s",
        rate=_wal_blocks,
    ),
    _cause("binary_log", counted_as="–", scopes=frozenset(), rate=_none),
    _cause("tls_handshakes", counted_as="sessions"),
    _cause("tls_bytes", counted_as="bytes per connection", rate=_none),
)

LEAVES_OUT = (
    report.LEAVES_OUT[0],
    "**Bytes through TLS.** PostgreSQL counts no bytes per connection (no Bytes_sent or "
    "Bytes_received): the cost of encrypting what its connections carry is not estimated; "
    "only their handshakes are.",
    "**Page cache hits.** blks_read counts every block PostgreSQL asked the kernel for, "
    "whether its page cache held it (nothing to decrypt) or the disk gave it: the unit is "
    "per such block at the measured cells' hit ratio, so a server whose page cache holds "
    "more of its reads pays less than estimated, one that holds less pays more.",
    "**The kernel's part.** fscrypt decrypts and encrypts in kernel workers as well as in "
    "PostgreSQL's processes; the units hold both, as measured here.",
    "**Temporary files and the server's other files.** fscrypt encrypts every file of the "
    "data directory; only table blocks and the WAL are counted.",
)


def interval_rates(a: Snapshot, b: Snapshot, seconds: float) -> Rates:
    """Each counter's growth per second between two readings, the reader's own session
    taken out."""
    if seconds <= 0:
        raise EncbenchError("two readings of the server's counters at the same moment")
    if b.started_s != a.started_s:
        raise EncbenchError(
            "the server restarted during the window (pg_postmaster_start_time changed): run "
            "the estimate again"
        )

    def per_s(before: int, after: int, own: int = 0) -> float:
        return max(after - before - own, 0) / seconds

    return Rates(
        seconds=seconds,
        pages_read=per_s(a.blocks_read, b.blocks_read),
        pages_written=per_s(a.blocks_written, b.blocks_written),
        buffer_pool_reads=None,
        redo_bytes=per_s(a.wal_bytes, b.wal_bytes),
        binlog_bytes=None,
        connections=per_s(a.sessions, b.sessions, OWN_SESSIONS_PER_INTERVAL),
        tls_handshakes=None,
        bytes=0.0,  # not counted: the causes that would read it read None
        pages_decrypted=None,
        pages_encrypted=None,
        server_cores=None,
    )


def progress_line(elapsed_s: float, seconds: float, r: Rates) -> str:
    return (
        f"estimate: {elapsed_s:.0f} s of {seconds:.0f}: {r.pages_read:,.0f} blocks read/s, "
        f"{r.pages_written:,.0f} written/s, {(r.redo_bytes or 0.0) / (1 << 20):,.2f} MiB/s "
        f"of WAL, {r.connections:,.1f} connections/s"
    )


def on_now(variables: Mapping[str, str]) -> dict[str, str]:
    """What the server already encrypts: at rest it cannot tell; TLS from pg_stat_ssl."""
    if variables.get("ssl") != "on":
        tls = "no (ssl = off)"
    else:
        tls = (
            f"{variables.get('clients_tls', '?')} of {variables.get('clients', '?')} client "
            "connections open at the start on TLS (pg_stat_ssl)"
        )
    return {
        "table_reads": NOT_AT_REST,
        "table_writes": NOT_AT_REST,
        "redo_log": NOT_AT_REST,
        "binary_log": "–",
        "tls_handshakes": tls,
        "tls_bytes": tls,
    }


Reader = Callable[[], Snapshot]


def sample_window(
    read: Reader,
    seconds: float,
    variables: dict[str, str],
    progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Window:
    """`seconds` of readings, one every ~10 s, with a line of progress after each."""
    count = max(1, round(seconds / SAMPLE_S))
    step = seconds / count
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    first = read()
    start = previous_at = clock()
    previous = first
    intervals = []
    for i in range(1, count + 1):
        sleep(max(0.0, start + i * step - clock()))
        now, at = read(), clock()
        intervals.append(interval_rates(previous, now, at - previous_at))
        progress(progress_line(at - start, seconds, intervals[-1]))
        previous, previous_at = now, at
    return Window(
        started_at=started_at,
        seconds=previous_at - start,
        variables=variables
        | {"clients": str(first.clients), "clients_tls": str(first.clients_tls)},
        changed={},
        intervals=intervals,
        missing=["bytes per connection"],
        server_cpu="not read (PostgreSQL's CPU is its postmaster's and every backend's; "
        "not read over ssh yet)",
    )


def build(
    target: str,
    version: str,
    window: Window,
    e: model.Estimate,
    units: Mapping[str, Resolved],
) -> report.EstimateReport:
    words = [
        w.replace(" (the cipher alone: a floor)", "") for w in report.in_words(e, window, units)
    ]
    words.append(
        "PostgreSQL has no encryption at rest of its own: the at-rest figures are those of "
        "its data directory on fscrypt, which encrypts the WAL too (scope `all`)."
    )
    return report.EstimateReport(
        target=target,
        server=version,
        window=window,
        estimate=e,
        on_now=on_now(window.variables),
        units=report.units_used(units),
        words=words,
        leaves_out=list(LEAVES_OUT),
    )


def no_binary_log(e: model.Estimate) -> model.Estimate:
    """The binary log's row says why it has no figure: PostgreSQL has none (its WAL is both
    MariaDB's redo log and its binary log)."""
    causes = [
        c.model_copy(update={"missing": "PostgreSQL has no binary log (the WAL is its log)"})
        if c.key == "binary_log"
        else c
        for c in e.causes
    ]
    return e.model_copy(update={"causes": causes})


def used_units(resolved: Mapping[str, Resolved]) -> dict[str, Resolved]:
    return {n: u for n, u in resolved.items() if n in UNITS}


class Reading:
    """The target's counters, one connection each (the login's password from PGPASSWORD or the
    user's password file, never argv)."""

    def __init__(self, login: pg_target.PgTarget) -> None:
        self.login = login
        # One connection for the version and the settings: each reading before the window delays it.
        [[number, version, ssl]] = login.query(
            "SELECT current_setting('server_version_num'), version(), current_setting('ssl')"
        )
        self.version_num = int(number)
        self.settings = {"version": version.split(" on ", 1)[0], "ssl": ssl}
        if self.version_num < pg_counters.MIN_VERSION:
            raise BadInput(
                f"{login.name} is PostgreSQL {self.version_num // 10000}: the estimate needs "
                "14 or later (pg_stat_database.sessions, pg_stat_wal)"
            )
        self.sql = pg_counters.snapshot_sql(self.version_num)

    def __call__(self) -> Snapshot:
        rows = self.login.query(self.sql)
        try:
            return pg_counters.parse(rows[0])
        except (IndexError, ValueError) as exc:
            raise EncbenchError(f"{self.login.name}: unreadable counters ({exc})") from None


def reads(spec: TargetSpec) -> bool:
    """Whether the target is a PostgreSQL, whose counters this module reads."""
    return spec.kind == KIND_NAME


def check(spec: TargetSpec) -> None:
    """The login works and its server is recent enough (the statistics views it reads any
    login may read)."""
    with pg_target.login(spec) as login:
        Reading(login)


def estimate(
    spec: TargetSpec,
    seconds: int,
    scope: model.Scope,
    resolved: Mapping[str, Resolved],
    log: Callable[[str], None],
) -> report.EstimateReport:
    where = f"{spec.host}:{spec.port}"
    units = used_units(resolved)
    with pg_target.login(spec) as login:
        read = Reading(login)
        variables = read.settings
        log(
            f"encbench: {where} as {spec.user}: reading its statistics views every "
            f"{SAMPLE_S:.0f} s for {seconds} s, one short connection each (nothing is changed "
            "on it)"
        )
        window = sample_window(read, seconds, variables, log)
    e = no_binary_log(model.estimate(window.intervals, units, scope, CAUSES))
    return build(f"postgresql://{where}", variables["version"], window, e, units)
