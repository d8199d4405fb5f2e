"""The unit costs of encryption on this machine, from its own measured runs, never from a
constant: the extra server CPU of one page read from disk (decrypted), one page written
(encrypted), one TLS handshake and one MiB through TLS, each the mean over the paired
rounds of a finished results directory with its interval; and one MiB of redo or binary
log, which no run measures yet, from the cipher's own speed there (a floor).

  page read     io-bound read cells:   (encrypted − plain server CPU per txn)
                                       ÷ pages decrypted per txn
  page written  write cells:           (encrypted − plain server CPU per txn
                                        − page-read cost × pages decrypted per txn)
                                       ÷ pages encrypted per txn
  handshake     TLS connect cells:     encrypted − plain server CPU per connection
  TLS MiB       TLS bulk cells:        encrypted − plain server CPU per MiB read
  log MiB       the directory's `openssl speed` of the server's cipher at 16 KiB

Only the rounds the report counts (engine/rounds.py: interference rounds left out) are used.
A unit is the mean over all its rounds.  Its interval holds the Student-t 95% interval of
that mean and every cell's own 95% interval (cell_interval), each over blocks of two rounds
as the study's own intervals are (a round alone carries its order, or in a duet its CPU):
the cost per page is not one number across loads (8.3–15.7 µs per page read over the cells
of four measured runs, 1 to 64 threads, a pool of a tenth to half the data; one 1-thread
cell 8.5 µs on one day and 15.7 µs on another), and no trend with concurrency, pool or how
busy the server was stands out of the cells' own intervals, so a server at a load of its own
may pay what any measured load paid, each known only to its interval; never below the
cipher's own cost per page (the directory's `openssl speed`), which no load escapes.  The
units profile measures a light load (1 thread) beside busy ones (4 and 16) for that reason
(docs/method.md, "The estimate's unit costs across loads").

The units are kept in $XDG_STATE_HOME/encbench/estimate-units.json, beside the calibration
(report/noise_floor.py), each with the results directory and date it came from; units from a newer
directory replace those of the same name and keep the others.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from encbench import capacity, state, stats
from encbench import studies as _studies  # noqa: F401  (registers the profile's sections)
from encbench.engine import rounds as pairing
from encbench.engine.stopping_rule import Round, StopRule
from encbench.errors import BadInput
from encbench.estimate import pg_units
from encbench.profiles.profile import Profile
from encbench.profiles.profile import parse as parse_profile
from encbench.report.models import Model
from encbench.results import store as results_store
from encbench.results.store import ResultStore
from encbench.servers.variants import EncryptionSpec
from encbench.studies.at_rest import (
    MARIADB,
    POSTGRESQL,
    CellKey,
    RunRecord,
    configuration,
    measure_options,
    measures_postgresql,
    page_us,
    pg_at_rest_options,
)
from encbench.studies.in_transit import TransitCell, TransitRecord, transit_options
from encbench.workloads.sysbench import WRITE_WORKLOADS

MACHINE_FILE = "estimate-units.json"
MACHINE_FILE_SCHEMA = 1
MIB = 1 << 20

UnitName = Literal[
    "page_read", "page_written", "log_mib", "handshake", "tls_mib", "fs_block_read",
    "fs_block_written",
]  # fmt: skip
UNIT_NAMES: tuple[UnitName, ...] = (
    "page_read",
    "page_written",
    "log_mib",
    "handshake",
    "tls_mib",
    # PostgreSQL's, on fscrypt (estimate/pg_units.py).
    "fs_block_read",
    "fs_block_written",
)
# What one unit is, as the estimate's tables name it.
PER: dict[str, str] = {
    "page_read": "page",
    "page_written": "page",
    "log_mib": "MiB",
    "handshake": "handshake",
    "tls_mib": "MiB",
    "fs_block_read": "block",
    "fs_block_written": "block",
}
WHAT: dict[str, str] = {
    "page_read": "extra server CPU per page read from disk (decrypted)",
    "page_written": "extra server CPU per page written (encrypted)",
    "log_mib": "the cipher's CPU per MiB of redo or binary log (encrypted)",
    "handshake": "extra server CPU per new connection with TLS (one handshake)",
    "tls_mib": "extra server CPU per MiB through TLS",
    "fs_block_read": "extra CPU per 8 KiB block PostgreSQL reads on fscrypt (decrypted)",
    "fs_block_written": "extra CPU per 8 KiB block PostgreSQL writes on fscrypt (encrypted)",
}
# How to measure a unit a directory lacks, said where it is missing.
FIX = (
    "`encbench estimate --measure-units` measures every unit in about 13 minutes, or "
    "`--units-from DIR` takes them from a finished run that has those cells"
)


class CipherOp(Model):
    """The cipher's own work in one unit as `openssl speed` measures it: `count` blocks of
    `block_bytes` of `algorithm` (openssl's name) in `direction`, or `count` signatures
    (direction "sign", block_bytes 0).  What rescale.py re-measures elsewhere."""

    algorithm: str
    direction: Literal["encrypt", "decrypt", "sign"]
    block_bytes: int
    count: float


class Unit(Model):
    """One unit cost, in µs of server CPU, with its interval and where it came from."""

    name: UnitName
    us: float
    ci_us: tuple[float, float]
    kind: Literal["measured", "cipher only"]
    configuration: str  # "AES_CTR, scope tables"; "rsa2048, TLSv1.3 TLS_AES_256_GCM_SHA384"
    basis: str  # the cells and rounds, in words
    cells: list[str]
    rounds: int
    cipher: CipherOp | None  # its cipher part, to re-measure (None: none known)
    # The cipher part's µs by the directory's own `openssl speed` (the report's cipher floor),
    # where it measured that cipher; None: it is taken from `openssl speed` when rescaled.
    cipher_us: float | None = None
    source: str  # the results directory, as an absolute path
    measured_on: str  # the date of its first run (UTC)


@dataclass(frozen=True)
class DirectoryUnits:
    """What one results directory gives: the units it measured, and why each other is
    missing."""

    directory: Path
    units: dict[str, Unit]
    missing: dict[str, str]


@dataclass(frozen=True)
class CellValues:
    """One cell's per-round values of a unit (µs), in round order."""

    label: str
    values: list[float]
    started: str  # its first run's start (UTC, ISO)
    # Per block (two rounds in opposite orders, or with the CPUs swapped in a duet), the mean
    # of its rounds' values; empty where the records pair into no blocks.
    blocks: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class StudyRuns:
    """A study's runs in a results directory with the profile's stopping settings (which
    rounds count) — what every unit is computed from."""

    runs: list[Any]
    rule: StopRule
    profile: Profile
    record: dict[str, Any]  # the study's record (at-rest.json, in-transit.json)
    crypto: dict[str, Any] | None = None  # the directory's `openssl speed` (crypto.json)

    def cells(self) -> list[Any]:
        return list(dict.fromkeys(r.cell for r in self.runs))

    def pairs(self, cell: Any) -> list[tuple[Any, Any]]:
        """(encrypted, plain) of every counted round of `cell`, in round order."""
        counted = pairing.cell_rounds(self.runs, cell, self.rule).counted
        return [(r.runs["encrypted"], r.runs["plain"]) for r in counted]

    def block_pairs(self, cell: Any) -> list[tuple[tuple[Any, Any], tuple[Any, Any]]]:
        """Each block of `cell` as its two rounds' (encrypted, plain)."""

        def pair(r: Round) -> tuple[Any, Any]:
            return (r.runs["encrypted"], r.runs["plain"])

        blocks = pairing.cell_rounds(self.runs, cell, self.rule).blocks
        return [(pair(b.first), pair(b.second)) for b in blocks]


def _summarize(
    name: UnitName,
    cells: Sequence[CellValues],
    *,
    what_cells: str,
    configuration: str,
    cipher: CipherOp | None,
    source: str,
    cipher_us: float | None = None,
) -> Unit | str:
    """The unit over every round of `cells`, or why there is none."""
    cells = [c for c in cells if c.values]
    values = [v for c in cells for v in c.values]
    if len(values) < 2:
        return f"no {what_cells} with the server's CPU measured (at least 2 rounds)"
    mean, stdev = stats.mean_and_stdev(values)
    # The mean's interval over blocks where every cell has them, as every interval of the
    # study: a round's value carries its order, or in a duet its CPU (one server's halves
    # differ 12–16% here), which only a block cancels.
    blocks = [b for c in cells for b in c.blocks]
    if all(len(c.blocks) >= 2 for c in cells):
        ci = stats.mean_ci(*stats.mean_and_stdev(blocks), len(blocks)) or (mean, mean)
        ci = (ci[0] + mean - statistics.fmean(blocks), ci[1] + mean - statistics.fmean(blocks))
    else:
        ci = stats.mean_ci(mean, stdev, len(values)) or (mean, mean)
    ends = [end for c in cells for end in cell_interval(c.values, c.blocks)]
    labels = [c.label for c in cells]
    # No load pays less than the cipher's own work (where measured), nor less than nothing:
    # a mean below it is noise, and the unit is then that floor, so that its interval, which
    # starts there, holds its point.
    floor = max(cipher_us or 0.0, 0.0)
    low, high = max(min(ci[0], *ends), floor), max(ci[1], *ends, floor)
    return Unit(
        name=name,
        us=min(max(mean, low), high),
        ci_us=(low, high),
        kind="measured",
        configuration=configuration,
        basis=f"{len(cells)} {plural(what_cells, len(cells))} ({'; '.join(labels)}), "
        f"{len(values)} rounds",
        cells=labels,
        rounds=len(values),
        cipher=cipher,
        cipher_us=cipher_us,
        source=source,
        measured_on=min(c.started for c in cells)[:10],
    )


def cell_interval(values: Sequence[float], blocks: Sequence[float] = ()) -> tuple[float, float]:
    """One cell's own 95% interval of its mean (its mean alone below two rounds): a server at
    that cell's load may pay anything in it, so the unit's interval holds every cell's.  Over
    its blocks where it has two or more (as the study's intervals), centred on the rounds'
    mean; else over its rounds."""
    mean = statistics.fmean(values)
    if len(blocks) >= 2:
        centre = statistics.fmean(blocks)
        low, high = stats.mean_ci(centre, statistics.stdev(blocks), len(blocks)) or (mean, mean)
        return (low + mean - centre, high + mean - centre)
    if len(values) < 2:
        return (mean, mean)
    return stats.mean_ci(mean, statistics.stdev(values), len(values)) or (mean, mean)


def plural(words: str, count: int) -> str:
    """ "io-bound read cells" for 2, "io-bound read cell" for 1."""
    return words if count != 1 else words.removesuffix("s")


def _values(
    source: StudyRuns,
    cells: Iterable[Any],
    value: Callable[[Any, Any], float | None],
) -> list[CellValues]:
    found = []
    for cell in cells:
        pairs = source.pairs(cell)
        values = [v for e, p in pairs if (v := value(e, p)) is not None]
        blocks = []
        for first, second in source.block_pairs(cell):
            a, b = value(*first), value(*second)
            if a is not None and b is not None:
                blocks.append((a + b) / 2)
        if pairs:
            started = min(e.started_at for e, _ in pairs)
            found.append(CellValues(cell.label, values, started, blocks))
    return found


# -- at rest -------------------------------------------------------------------------------


def extra_us_per_txn(encrypted: RunRecord, plain: RunRecord) -> float | None:
    """Encrypted − plain server CPU per transaction, µs (None: the CPU was not read)."""
    if encrypted.cpu_ms_per_txn is None or plain.cpu_ms_per_txn is None:
        return None
    return 1000.0 * (encrypted.cpu_ms_per_txn - plain.cpu_ms_per_txn)


def is_read_cell(cell: CellKey) -> bool:
    """A cell whose encryption cost is its page reads: a read-only workload, io-bound."""
    return cell.workload not in WRITE_WORKLOADS and cell.regime == "io-bound" and not cell.shape


def is_write_cell(cell: CellKey, spec: EncryptionSpec) -> bool:
    """A write workload whose encrypted server encrypted only its table pages: under scope
    `all` its extra CPU would also hold the redo and binary logs', which no run counts."""
    return cell.workload in WRITE_WORKLOADS and spec.scope == "tables" and not cell.shape


def server_algorithm(source: StudyRuns) -> str:
    """The one algorithm the units are taken for: the profile's first."""
    return str(source.profile.server.encryption_algorithm[0])


def _page_op(algorithm: str, direction: Literal["encrypt", "decrypt"]) -> CipherOp | None:
    cipher = capacity.SERVER_CIPHERS.get(algorithm)
    if cipher is None:
        return None
    return CipherOp(
        algorithm=cipher, direction=direction, block_bytes=capacity.PAGE_BYTES, count=1.0
    )


def _floor_us(source: StudyRuns, op: CipherOp | None) -> float | None:
    """The cipher's µs per page in the op's direction, as the report's cipher floor has it."""
    if op is None or not source.crypto or op.direction == "sign":
        return None
    return page_us(source.crypto, op.algorithm, op.direction)


def _cells_of(source: StudyRuns, keep: Callable[[CellKey, EncryptionSpec], bool]) -> list[Any]:
    algorithm = server_algorithm(source)
    found = []
    for cell in source.cells():
        spec = configuration(cell, source.profile)
        # InnoDB's own encryption alone: the filesystem layer's cost is not a page's cipher;
        # against plain alone (against scope tables both sides run the cipher).
        tde_alone = spec.layer == "tde" and spec.control is None
        if spec.algorithm == algorithm and tde_alone and keep(cell, spec):
            found.append(cell)
    return found


def page_read_cells(source: StudyRuns, exclude: object = None) -> list[CellValues]:
    def per_page(e: RunRecord, p: RunRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        if extra is None or e.pages_decrypted <= 0:
            return None
        return extra / (e.pages_decrypted / e.transactions)

    cells = [c for c in _cells_of(source, lambda c, _: is_read_cell(c)) if c != exclude]
    return _values(source, cells, per_page)


def page_read_unit(source: StudyRuns, where: str, exclude: object = None) -> Unit | str:
    algorithm = server_algorithm(source)
    op = _page_op(algorithm, "decrypt")
    return _summarize(
        "page_read",
        page_read_cells(source, exclude),
        what_cells="io-bound read cells",
        configuration=f"{algorithm}, scope tables",
        cipher=op,
        source=where,
        cipher_us=_floor_us(source, op),
    )


def page_written_unit(
    source: StudyRuns, where: str, read_us: float | None, exclude: object = None
) -> Unit | str:
    """Per page encrypted, the reads of the same transactions taken out at the page-read
    cost (an io-bound write reads pages too); without that cost only runs that decrypted
    nothing count."""

    def per_page(e: RunRecord, p: RunRecord) -> float | None:
        extra = extra_us_per_txn(e, p)
        if extra is None or e.pages_encrypted <= 0:
            return None
        if e.pages_decrypted > 0:
            if read_us is None:
                return None
            extra -= read_us * e.pages_decrypted / e.transactions
        return extra / (e.pages_encrypted / e.transactions)

    algorithm = server_algorithm(source)
    cells = [c for c in _cells_of(source, is_write_cell) if c != exclude]
    op = _page_op(algorithm, "encrypt")
    return _summarize(
        "page_written",
        _values(source, cells, per_page),
        what_cells="write cells",
        configuration=f"{algorithm}, scope tables",
        cipher=op,
        source=where,
        cipher_us=_floor_us(source, op),
    )


def log_unit(crypto: dict[str, Any] | None, algorithm: str, where: str, date: str) -> Unit | str:
    """Per MiB of redo or binary log: the cipher alone (encrypting at 16 KiB, one context
    over many buffers), from the directory's `openssl speed` — a floor, since no run counts
    the log bytes it encrypted."""
    op = _page_op(algorithm, "encrypt")
    entry = (
        capacity.cipher_entry(crypto, op.algorithm, capacity.PAGE_BYTES, True, 1, "encrypt")
        if crypto and op
        else None
    )
    if op is None or entry is None or not entry.get("mb_per_s_mean"):
        return f"the directory has no `openssl speed` figure of {algorithm} at 16 KiB"
    mean, stdev = float(entry["mb_per_s_mean"]), float(entry.get("mb_per_s_stdev") or 0.0)
    n = int(entry.get("n") or 1)
    ci = stats.mean_ci(mean, stdev, n) or (mean, mean)
    # MB/s is 10^6 bytes per second: µs per MiB = 2^20 / (MB/s).
    fastest, slowest = max(ci[1], 1e-9), max(ci[0], 1e-9)
    return Unit(
        name="log_mib",
        us=MIB / mean,
        ci_us=(MIB / fastest, MIB / slowest),
        kind="cipher only",
        configuration=f"{algorithm}, {op.algorithm} at 16 KiB",
        basis=f"openssl speed -evp {op.algorithm}, 16 KiB, {n} repeats: the cipher alone",
        cells=[],
        rounds=0,
        cipher=op.model_copy(update={"count": MIB / capacity.PAGE_BYTES}),
        cipher_us=MIB / mean,
        source=where,
        measured_on=date,
    )


# -- in transit ----------------------------------------------------------------------------


def _tls_words(source: StudyRuns, cell: TransitCell) -> str:
    proofs = source.record.get("proofs") or {}
    return str((proofs.get(cell.slug) or {}).get("encrypted") or "")


# openssl speed names of a server key type (servers/pki.py) and of a TLS record cipher.
SIGNATURES = {"ecdsa-p256": "ecdsap256"}
RECORD_CIPHERS = (
    ("AES_256_GCM", "aes-256-gcm"),
    ("AES256-GCM", "aes-256-gcm"),
    ("AES_128_GCM", "aes-128-gcm"),
    ("AES128-GCM", "aes-128-gcm"),
    ("CHACHA20", "chacha20-poly1305"),
)


def record_cipher(words: str) -> str | None:
    upper = words.upper()
    return next((name for marker, name in RECORD_CIPHERS if marker in upper), None)


def is_handshake_cell(cell: TransitCell) -> bool:
    return cell.test == "connect" and cell.method == "tls" and not cell.resume


def is_bulk_cell(cell: TransitCell) -> bool:
    return cell.test == "bulk" and cell.method == "tls"


def _first_kind(cells: list[TransitCell], kind: Callable[[TransitCell], str]) -> list[Any]:
    """The cells of one key type (or cipher): the first measured's."""
    if not cells:
        return []
    first = kind(cells[0])
    return [c for c in cells if kind(c) == first]


def _server_cpu_per(
    e: TransitRecord, p: TransitRecord, amount: Callable[[TransitRecord], float]
) -> float | None:
    if e.server_cpu_s is None or p.server_cpu_s is None or amount(e) <= 0 or amount(p) <= 0:
        return None
    return 1e6 * (e.server_cpu_s / amount(e) - p.server_cpu_s / amount(p))


def handshake_cells(source: StudyRuns, exclude: object = None) -> list[TransitCell]:
    cells = [c for c in source.cells() if is_handshake_cell(c) and c != exclude]
    return _first_kind(cells, lambda c: c.key_type)


def handshake_unit(source: StudyRuns, where: str, exclude: object = None) -> Unit | str:
    def per_connection(e: TransitRecord, p: TransitRecord) -> float | None:
        if e.tls_handshakes <= 0:
            return None
        return _server_cpu_per(e, p, lambda r: float(r.events))

    cells = handshake_cells(source, exclude)
    key = cells[0].key_type if cells else ""
    signature = SIGNATURES.get(key, key)
    op = (
        CipherOp(algorithm=signature, direction="sign", block_bytes=0, count=1.0)
        if signature in capacity.ASYMMETRIC or signature.startswith("rsa")
        else None
    )
    return _summarize(
        "handshake",
        _values(source, cells, per_connection),
        what_cells="TLS connect cells",
        configuration=f"{key}, {_tls_words(source, cells[0])}" if cells else "",
        cipher=op,
        source=where,
    )


def bulk_cells(source: StudyRuns, exclude: object = None) -> list[TransitCell]:
    cells = [c for c in source.cells() if is_bulk_cell(c) and c != exclude]
    return _first_kind(cells, lambda c: c.cipher)


def tls_mib_unit(source: StudyRuns, where: str, exclude: object = None) -> Unit | str:
    cells = bulk_cells(source, exclude)
    words = (cells[0].cipher or _tls_words(source, cells[0])) if cells else ""
    cipher = record_cipher(words)
    op = (
        CipherOp(
            algorithm=cipher,
            direction="encrypt",
            block_bytes=capacity.PAGE_BYTES,
            count=MIB / capacity.PAGE_BYTES,
        )
        if cipher
        else None
    )
    return _summarize(
        "tls_mib",
        _values(source, cells, lambda e, p: _server_cpu_per(e, p, lambda r: r.bytes / MIB)),
        what_cells="TLS bulk cells",
        configuration=words,
        cipher=op,
        source=where,
    )


# -- a results directory -------------------------------------------------------------------


def open_directory(directory: Path) -> tuple[ResultStore, Profile]:
    """A finished (or stopped) run's directory, refused when it cannot give units."""
    store = ResultStore.open(directory)
    if store.meta.get("calibration"):
        raise BadInput(
            f"{directory} is an A/A calibration: both its sides are plain, so it holds no "
            "cost of encryption; give the directory of an ordinary run"
        )
    return store, parse_profile(store.profile_text, str(directory / "profile.toml"))


def at_rest_runs(store: ResultStore, profile: Profile) -> StudyRuns:
    return StudyRuns(
        [r for r in store.runs(RunRecord) if r.cell.kind == MARIADB],
        measure_options(profile),
        profile,
        store.read_json("at-rest.json") or {},
        store.read_json("crypto.json"),
    )


def transit_runs(store: ResultStore, profile: Profile) -> StudyRuns:
    return StudyRuns(
        store.runs(TransitRecord),
        transit_options(profile),
        profile,
        store.read_json("in-transit.json") or {},
    )


def postgresql_units(store: ResultStore, profile: Profile, where: str) -> dict[str, Unit | str]:
    """The filesystem layer's two units from the PostgreSQL cells (pg_units.py), or why
    not; none where the directory measured no PostgreSQL."""
    if not measures_postgresql(profile):
        return {}
    runs = [r for r in store.runs(RunRecord) if r.cell.kind == POSTGRESQL]
    source = StudyRuns(runs, pg_at_rest_options(profile), profile, {})
    if pg_units.predates(source.runs):
        return {"fs_block_read": pg_units.PREDATES, "fs_block_written": pg_units.PREDATES}
    words = pg_units.configuration(profile.server.fscrypt_contents)

    def summarize(name: UnitName, rounds: list[pg_units.CellRounds], what: str) -> Unit | str:
        cells = [CellValues(*r) for r in rounds]
        return _summarize(
            name, cells, what_cells=what, configuration=words, cipher=None, source=where
        )

    cells = source.cells()
    read = summarize(
        "fs_block_read",
        pg_units.block_read_rounds(cells, source.pairs),
        "PostgreSQL io-bound read cells",
    )
    read_us = read.us if isinstance(read, Unit) else None
    written = summarize(
        "fs_block_written",
        pg_units.block_written_rounds(cells, source.pairs, read_us),
        "PostgreSQL write cells",
    )
    return {"fs_block_read": read, "fs_block_written": written}


def from_directory(directory: Path) -> DirectoryUnits:
    """Every unit a results directory gives, and why each other is missing."""
    store, profile = open_directory(directory)
    where = str(directory.resolve())
    rest = at_rest_runs(store, profile)
    transit = transit_runs(store, profile)
    read = page_read_unit(rest, where)
    read_us = read.us if isinstance(read, Unit) else None
    dates = sorted(r.started_at for r in [*rest.runs, *transit.runs])
    found: dict[str, Unit | str] = {
        "page_read": read,
        "page_written": page_written_unit(rest, where, read_us),
        "log_mib": log_unit(
            store.read_json("crypto.json"),
            server_algorithm(rest),
            where,
            dates[0][:10] if dates else "",
        ),
        "handshake": handshake_unit(transit, where),
        "tls_mib": tls_mib_unit(transit, where),
        **postgresql_units(store, profile, where),
    }
    units = {k: v for k, v in found.items() if isinstance(v, Unit)}
    if not units.keys() - {"log_mib"}:
        raise BadInput(
            f"{directory} has no run that gives a unit cost (io-bound read or write cells "
            f"at rest, TLS connect or bulk cells in transit, PostgreSQL's at rest, with the "
            f"server's CPU): {FIX}"
        )
    return DirectoryUnits(directory, units, {k: v for k, v in found.items() if isinstance(v, str)})


# -- this machine's state ------------------------------------------------------------------


def machine_file() -> Path:
    """Beside the calibration (report/noise_floor.py): this machine's (and user's) state."""
    return state.base() / MACHINE_FILE


def read_machine() -> dict[str, Unit]:
    """The stored units; an unreadable or foreign file counts as none."""
    try:
        data = json.loads(machine_file().read_text())
        if not isinstance(data, dict) or data.get("schema") != MACHINE_FILE_SCHEMA:
            return {}
        return {name: Unit.model_validate(unit) for name, unit in data["units"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def write_machine(units: dict[str, Unit]) -> Path:
    """`units` replace the stored units of the same names; the others stay."""
    merged = read_machine() | units
    path = machine_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    results_store.write_json(
        path,
        {
            "schema": MACHINE_FILE_SCHEMA,
            "units": {name: merged[name].model_dump(mode="json") for name in sorted(merged)},
        },
    )
    return path
