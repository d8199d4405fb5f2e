"""PostgreSQL's part of `encbench estimate` (estimate/kinds.py's KindEstimate, given by its
ways): how it counts what encryption would act on, read over the window from its statistics
views (counters.py beside it, one short connection per reading, every 10 s) and from
postgres_exporter's series in Prometheus, and what the estimate says of it.

The causes are the model's (estimate/model.py) as PostgreSQL counts them:

  table reads     blks_read            × fs block read
  table writes    blocks written       × fs block written
  WAL             wal_bytes ÷ 8 KiB    × fs block written   (scope all)
  TLS handshakes  sessions             × handshake
  TLS bytes       not counted: PostgreSQL keeps no bytes per connection

PostgreSQL has no encryption at rest of its own: what it would pay is a filesystem's (fscrypt
is what encbench measures), which encrypts the whole data directory, WAL included — scope
`all` is what fscrypt of the data directory costs.  Each reading is one short connection of
encbench's, taken out of `sessions` (one per interval).  Nothing is changed on the server.

Through postgres_exporter (Debian 12's 0.11), reduced per instance as MariaDB's exporter's:

  blocks read     pg_stat_database_blks_read, summed over the databases
  blocks written  pg_stat_bgwriter_buffers_{checkpoint,clean,backend}_total
  sessions        pg_stat_database_sessions, summed over the databases (PostgreSQL 14+)

It exports no pg_stat_wal, so the WAL is not estimated through it (`--target` reads it); nor
are bytes through TLS, which PostgreSQL does not count.  The exporter holds one connection
open: its scrapes add no sessions.

Here only what PostgreSQL knows, in plain values: estimate/ makes the model's causes, rates
and reports of them (servers/ stands below estimate/)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from encbench.errors import BadInput, EncbenchError
from encbench.servers.postgresql import counters as pg_counters
from encbench.servers.postgresql import target as pg_target
from encbench.servers.postgresql.counters import Snapshot

BLOCK_BYTES = 8192
OWN_SESSIONS_PER_INTERVAL = 1  # the reading's own connection
NOT_AT_REST = (
    "unknown to PostgreSQL: it has no encryption of its own (a filesystem's, such as "
    "fscrypt, is below it)"
)
UNITS = frozenset({"fs_block_read", "fs_block_written", "handshake"})


class Rates(Protocol):
    """What the estimate's rates (estimate/counters.py's Rates) hold that is read here."""

    pages_read: float
    pages_written: float
    redo_bytes: float | None
    connections: float


def _wal_blocks(r: Rates) -> float | None:
    return None if r.redo_bytes is None else r.redo_bytes / BLOCK_BYTES


def _none(_: Rates) -> float | None:
    return None


# Each of the model's causes as PostgreSQL counts it (the changes to the model's cause).  The
# rates are kept in the model's fields: pages_read is blks_read, pages_written the blocks
# written, redo_bytes wal_bytes, connections sessions.
CAUSES: dict[str, dict[str, Any]] = {
    "table_reads": {"counted_as": "blks_read", "unit": "fs_block_read", "rate_unit": "blocks/s"},
    "table_writes": {
        "counted_as": "buffers_checkpoint + buffers_clean + buffers_backend",
        "unit": "fs_block_written",
        "rate_unit": "blocks/s",
    },
    "redo_log": {
        "label": "WAL",
        "counted_as": "wal_bytes ÷ 8 KiB",
        "unit": "fs_block_written",
        "rate_unit": "blocks/s",
        "rate": _wal_blocks,
    },
    "binary_log": {"counted_as": "–", "scopes": frozenset(), "rate": _none},
    "tls_handshakes": {"counted_as": "sessions"},
    "tls_bytes": {"counted_as": "bytes per connection", "rate": _none},
}
# Why a cause has no figure, whichever way its counters were read.
NO_FIGURE = {"binary_log": "PostgreSQL has no binary log (the WAL is its log)"}

# What the estimate leaves out beyond what it leaves out of every server (its first words).
LEAVES_OUT = (
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
# The report's words about what its at-rest figures are.
AT_REST_WORDS = (
    "PostgreSQL has no encryption at rest of its own: the at-rest figures are those of "
    "its data directory on fscrypt, which encrypts the WAL too (scope `all`)."
)
MISSING = ["bytes per connection"]  # what a target's window cannot count
SERVER_CPU = (
    "not read (PostgreSQL's CPU is its postmaster's and every backend's; not read over ssh yet)"
)


def target_name(where: str) -> str:
    return f"postgresql://{where}"


def interval_rates(a: Snapshot, b: Snapshot, seconds: float) -> dict[str, float | None]:
    """Each counter's growth per second between two readings, the reader's own session
    taken out, by the estimate's rates' fields."""
    if seconds <= 0:
        raise EncbenchError("two readings of the server's counters at the same moment")
    if b.started_s != a.started_s:
        raise EncbenchError(
            "the server restarted during the window (pg_postmaster_start_time changed): run "
            "the estimate again"
        )

    def per_s(before: int, after: int, own: int = 0) -> float:
        return max(after - before - own, 0) / seconds

    return {
        "seconds": seconds,
        "pages_read": per_s(a.blocks_read, b.blocks_read),
        "pages_written": per_s(a.blocks_written, b.blocks_written),
        "buffer_pool_reads": None,
        "redo_bytes": per_s(a.wal_bytes, b.wal_bytes),
        "binlog_bytes": None,
        "connections": per_s(a.sessions, b.sessions, OWN_SESSIONS_PER_INTERVAL),
        "tls_handshakes": None,
        "bytes": 0.0,  # not counted: the causes that would read it read None
        "pages_decrypted": None,
        "pages_encrypted": None,
        "server_cores": None,
    }


def progress_line(elapsed_s: float, seconds: float, r: Rates) -> str:
    return (
        f"estimate: {elapsed_s:.0f} s of {seconds:.0f}: {r.pages_read:,.0f} blocks read/s, "
        f"{r.pages_written:,.0f} written/s, {(r.redo_bytes or 0.0) / (1 << 20):,.2f} MiB/s "
        f"of WAL, {r.connections:,.1f} connections/s"
    )


def window_variables(first: Snapshot) -> dict[str, str]:
    """What the window's first reading adds to the settings: the clients on TLS."""
    return {"clients": str(first.clients), "clients_tls": str(first.clients_tls)}


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


@contextmanager
def reading(spec: Any) -> Iterator[Reading]:
    """The target's reader (TargetSpec → one connection per reading), its settings read."""
    with pg_target.login(spec) as login:
        yield Reading(login)


def check(spec: Any) -> None:
    """The login works and its server is recent enough (the statistics views it reads any
    login may read)."""
    with reading(spec):
        pass


def reading_words(where: str, user: str, seconds: int, sample_s: float) -> str:
    return (
        f"encbench: {where} as {user}: reading its statistics views every "
        f"{sample_s:.0f} s for {seconds} s, one short connection each (nothing is changed "
        "on it)"
    )


# postgres_exporter's series (Prometheus), each of the estimate's rates' fields the sum of
# these counters over every series of the instance (one per database).
SERIES: dict[str, tuple[str, ...]] = {
    "pages_read": ("pg_stat_database_blks_read",),
    "pages_written": (
        "pg_stat_bgwriter_buffers_checkpoint_total",
        "pg_stat_bgwriter_buffers_clean_total",
        "pg_stat_bgwriter_buffers_backend_total",
    ),
    "connections": ("pg_stat_database_sessions",),
}
CAUSE_FIELD = {
    "table_reads": "pages_read",
    "table_writes": "pages_written",
    "tls_handshakes": "connections",
}
WINDOWS_FIELD = "pages_read"  # the field whose step windows say how long it reported
UP = "pg_up"  # whether the exporter reached its server
VARIABLES = {"ssl": "pg_settings_ssl"}  # a setting's name → its series
VERSION = ("pg_static", ("short_version",))  # the version's series and its labels
EXPORTER = "postgres_exporter"
NOT_EXPORTED = f"{EXPORTER} does not export it"
# Why a cause has no figure from the exporter's series.
NOT_IN_SERIES = {
    "redo_log": f"{NOT_EXPORTED} (pg_stat_wal; `--target postgresql://` reads it)",
    "tls_bytes": "PostgreSQL does not count bytes per connection",
}
RULES_WORDS = "PostgreSQL (postgres_exporter), its data directory on fscrypt"


def step_rate(field: str, matchers: str, window: str) -> str:
    """The field's rate over a step window, one series per instance (its databases added)."""
    parts = [f"sum by (instance) (rate({n}{{{matchers}}}[{window}]))" for n in SERIES[field]]
    return " + ".join(parts)


def version_of(labels: Mapping[str, str]) -> str:
    return f"PostgreSQL {labels.get('short_version', '')}"


def fleet_on_now(variables: Mapping[str, float]) -> dict[str, str]:
    """What an instance encrypts now, from its exporter's settings (name → value)."""
    ssl = variables.get("ssl")
    found = on_now({} if ssl is None else {"ssl": "on" if ssl >= 1 else "off"})
    if ssl is not None and ssl >= 1:
        tls = "ssl = on (which connections use it: not exported)"
        found |= {"tls_handshakes": tls, "tls_bytes": tls}
    elif ssl is None:
        found |= {"tls_handshakes": "unknown (pg_settings_ssl not exported)"}
    found["table_reads"] = found["table_writes"] = found["redo_log"] = "unknown (below it)"
    return found
