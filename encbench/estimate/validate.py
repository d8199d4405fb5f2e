"""The model held against measured runs, not assumed: each cell of a results directory is
fed to the same estimate (model.estimate) as a server's window would be — the plain run's
own counters, as the rates of a server that does not encrypt yet — and its estimated extra
CPU is set beside the extra CPU that cell measured (encrypted − plain server CPU per
transaction, or per connection or MiB in transit, at the plain run's rate).

The unit costs come from the same directory but never from the cell being checked: each
cell is estimated with units from the *other* cells (leave one cell out).  A cell whose
unit has no other cell to come from is listed without an estimate.  So the check asks
whether the cost per page (per handshake, per MiB) measured in some cells predicts the
others — across thread counts and workloads — which is what the estimate assumes of a
production server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from encbench import stats
from encbench.estimate import model, units
from encbench.estimate.counters import Rates
from encbench.estimate.rescale import Resolved
from encbench.estimate.units import StudyRuns, Unit
from encbench.report.models import Model
from encbench.studies.at_rest import CellKey, RunRecord, configuration
from encbench.studies.in_transit import TransitCell, TransitRecord
from encbench.workloads.sysbench import WRITE_WORKLOADS

IO_BOUND_READ = "io-bound read"
# The error the io-bound read cells are held to (tests/estimate/test_estimate_check.py).
LIMIT_PCT = 25.0


class CellCheck(Model):
    study: str  # "at rest", "in transit"
    cell: str
    kind: str  # io-bound read, in-memory read, write, connect, bulk
    rounds: int
    estimated_cores: float | None
    measured_cores: float
    measured_ci: tuple[float, float] | None
    error_pct: float | None  # estimated against measured, where the measured extra is > 0
    units: str  # the held-out units it was estimated with
    note: str = ""


class Validation(Model):
    directory: str
    cells: list[CellCheck]


def as_measured(unit: Unit) -> Resolved:
    low, high = unit.ci_us
    return Resolved(
        unit=unit, us=unit.us, low_us=low, high_us=high, rescaled=False, how="as measured"
    )


def _units_words(found: dict[str, Unit | str]) -> str:
    return "; ".join(
        f"{name.replace('_', ' ')} {u.us:,.2f} µs ({len(u.cells)} other cells)"
        for name, u in found.items()
        if isinstance(u, Unit)
    )


def _check(
    study: str,
    label: str,
    kind: str,
    pairs: Sequence[tuple[float | None, float]],
    found: dict[str, Unit | str],
) -> CellCheck:
    """One cell: (estimated, measured) extra cores per counted round."""
    measured = [m for _, m in pairs]
    mean, stdev = stats.mean_and_stdev(measured) if measured else (0.0, 0.0)
    ci = stats.mean_ci(mean, stdev, len(measured))
    estimates = [e for e, _ in pairs if e is not None]
    missing = "; ".join(f"{name.replace('_', ' ')}: {why}" for name, why in found.items()
                        if isinstance(why, str))  # fmt: skip
    if not estimates or len(estimates) < len(pairs):
        return CellCheck(
            study=study, cell=label, kind=kind, rounds=len(pairs), estimated_cores=None,
            measured_cores=mean, measured_ci=ci, error_pct=None, units=_units_words(found),
            note=f"no estimate: no other cell gives its unit ({missing})",
        )  # fmt: skip
    estimated = sum(estimates) / len(estimates)
    error = None
    note = ""
    if ci is not None and ci[0] > 0:
        error = 100.0 * (estimated / mean - 1.0)
    else:
        note = "the measured extra CPU is not distinguishable from 0"
    return CellCheck(
        study=study, cell=label, kind=kind, rounds=len(pairs), estimated_cores=estimated,
        measured_cores=mean, measured_ci=ci, error_pct=error, units=_units_words(found),
        note=note,
    )  # fmt: skip


def _estimated(rates: Rates, found: dict[str, Unit | str], study: str) -> float | None:
    resolved = {k: as_measured(u) for k, u in found.items() if isinstance(u, Unit)}
    result = model.estimate([rates], resolved, "tables")
    part = result.at_rest if study == "at rest" else result.in_transit
    # A cause with a rate and no unit would leave the estimate short: none is given then.
    if any(c.missing and c.rate and c.rate.value > 0 for c in result.causes if c.in_scope):
        return None
    return part.cores.value if part.cores else 0.0


def _rest_rates(plain: RunRecord) -> Rates:
    """The plain run's counters as a window of a server that does not encrypt yet."""
    per_s = plain.tps / plain.transactions
    return Rates(
        seconds=plain.wall_s,
        # InnoDB's counters: the runs validated are MariaDB's, which have them all.
        pages_read=(plain.pages_read or 0) * per_s,
        pages_written=(plain.pages_written or 0) * per_s,
        buffer_pool_reads=(plain.bp_reads or 0) * per_s,
        redo_bytes=None,
        binlog_bytes=None,
        connections=0.0,
        tls_handshakes=None,
        bytes=0.0,
        pages_decrypted=None,
        pages_encrypted=None,
    )


def _rest_kind(cell: CellKey) -> str:
    if cell.workload in WRITE_WORKLOADS:
        return "write"
    return IO_BOUND_READ if cell.regime == "io-bound" else "in-memory read"


def at_rest_checks(source: StudyRuns, where: str) -> list[CellCheck]:
    checks = []
    for cell in source.cells():
        spec = configuration(cell, source.profile)
        if (
            cell.shape
            or spec.scope != "tables"
            or spec.layer != "tde"
            or spec.algorithm != units.server_algorithm(source)
        ):
            continue  # what the units are not taken for (scope all: no log bytes counted)
        read = units.page_read_unit(source, where, exclude=cell)
        read_us = read.us if isinstance(read, Unit) else None
        found: dict[str, Unit | str] = {
            "page_read": read,
            "page_written": units.page_written_unit(source, where, read_us, exclude=cell),
        }
        pairs = [
            (_estimated(_rest_rates(p), found, "at rest"), extra * p.tps / 1e6)
            for e, p in source.pairs(cell)
            if (extra := units.extra_us_per_txn(e, p)) is not None
        ]
        if pairs:
            checks.append(_check("at rest", cell.label, _rest_kind(cell), pairs, found))
    return checks


def _transit_rates(plain: TransitRecord, cell: TransitCell) -> Rates:
    per_s = 1.0 / plain.wall_s
    return Rates(
        seconds=plain.wall_s,
        pages_read=0.0,
        pages_written=0.0,
        buffer_pool_reads=None,
        redo_bytes=None,
        binlog_bytes=None,
        connections=plain.events * per_s if cell.test == "connect" else 0.0,
        tls_handshakes=None,
        bytes=plain.bytes * per_s if cell.test == "bulk" else 0.0,
        pages_decrypted=None,
        pages_encrypted=None,
    )


def transit_checks(source: StudyRuns, where: str) -> list[CellCheck]:
    checks = []
    kinds: dict[str, Callable[[TransitRecord], float]] = {
        "connect": lambda r: float(r.events),
        "bulk": lambda r: r.bytes / units.MIB,
    }
    for cell in source.cells():
        if not (units.is_handshake_cell(cell) or units.is_bulk_cell(cell)):
            continue
        found: dict[str, Unit | str] = {
            "handshake" if cell.test == "connect" else "tls_mib": (
                units.handshake_unit(source, where, exclude=cell)
                if cell.test == "connect"
                else units.tls_mib_unit(source, where, exclude=cell)
            )
        }
        amount = kinds[cell.test]
        pairs = []
        for e, p in source.pairs(cell):
            if e.server_cpu_s is None or p.server_cpu_s is None or amount(p) <= 0:
                continue
            extra_per = e.server_cpu_s / amount(e) - p.server_cpu_s / amount(p)
            measured = extra_per * amount(p) / p.wall_s
            pairs.append((_estimated(_transit_rates(p, cell), found, "in transit"), measured))
        if pairs:
            checks.append(_check("in transit", cell.label, cell.test, pairs, found))
    return checks


def validate(directory: Path) -> Validation:
    store, profile = units.open_directory(directory)
    where = str(directory.resolve())
    return Validation(
        directory=where,
        cells=[
            *at_rest_checks(units.at_rest_runs(store, profile), where),
            *transit_checks(units.transit_runs(store, profile), where),
        ],
    )


def outside(validation: Validation, kind: str = IO_BOUND_READ, limit_pct: float = LIMIT_PCT
            ) -> list[str]:  # fmt: skip
    """The cells of `kind` whose error is beyond ±limit_pct, or that have no error to hold."""
    return [
        f"{c.cell}: {c.note or f'{c.error_pct:+.1f}%'}"
        for c in validation.cells
        if c.kind == kind and (c.error_pct is None or abs(c.error_pct) > limit_pct)
    ]
