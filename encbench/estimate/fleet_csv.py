"""estimate.csv (`encbench estimate --prometheus URL --out DIR`): the fleet's estimate for a
spreadsheet or pandas, one row per instance (wide: a row is everything about one server,
so it sorts, filters and joins on `instance` as it is), the most expensive first.

Columns, units in their names (cores: extra CPU cores; pct: percent; per_s: per second):
  rank, instance, server, scope         the rank by extra cores at the mean; the scope the
                                        totals count (tables, or all: also redo and binlog)
  extra_cores_mean[_low|_high]          the total at the window's mean rates and its interval
  extra_cores_peak[_low|_high]          the total at its peak (95th percentile of the step
                                        windows) and the unit's interval
  host_share_pct[_low|_high]            the mean as a share of its host's CPU in use (node_exporter)
  host_cpus, host_busy_cores            its host's CPUs, and the cores in use over the window
  CAUSE_rate_UNIT_per_s                 per cause (table_reads, table_writes, redo_log,
  CAUSE_extra_cores[_low|_high]         binary_log, tls_handshakes, tls_bytes): its mean rate,
  CAUSE_extra_cores_peak                its extra cores at the mean with the interval, and at
                                        the peak; a cause out of scope is listed, not in the total.
                                        A cause counted in two units (MariaDB's pages,
                                        PostgreSQL's blocks) has a rate column for each.
  tables_encrypted_now, tls_now         what the server already encrypts, in words
  notes                                 gaps, unreachable exporter, restarts, no traffic ("; ")
Instances whose exporter never reported their server's counters come last, without a rank
or figures, their note saying so.  Numbers are plain (full precision, no unit, no thousands
separator); an empty cell is a figure that does not exist."""

from __future__ import annotations

import csv
import io
import re

from encbench.estimate import fleet, model
from encbench.estimate.fleet import FleetReport, InstanceEstimate
from encbench.estimate.model import Figure

Cell = str | int | float | None


def not_estimated() -> str:
    return (
        "not estimated: no counters of its server in the window (its exporter could not reach "
        f"the server, {fleet.not_reached()}, or the counters are missing)"
    )


def _slug(rate_unit: str) -> str:
    """`pages/s` → pages_per_s, `MiB/s` → mib_per_s: a column name's unit."""
    return re.sub(r"[^a-z0-9]+", "_", rate_unit.lower().replace("/", " per ")).strip("_")


def _figure(name: str, f: Figure | None) -> dict[str, Cell]:
    return {
        name: None if f is None else f.value,
        f"{name}_low": None if f is None else f.low,
        f"{name}_high": None if f is None else f.high,
    }


def _rate_columns(r: FleetReport | None) -> dict[str, list[str]]:
    """Each cause's rate columns, one per unit its instances count in (MariaDB's 16 KiB pages,
    PostgreSQL's 8 KiB blocks: never added up in one column)."""
    found: dict[str, list[str]] = {c.key: [_slug(c.rate_unit)] for c in model.CAUSES}
    for e in r.instances if r is not None else ():
        for c in e.mean.causes:
            units = found.setdefault(c.key, [])
            if _slug(c.rate_unit) not in units:
                units.append(_slug(c.rate_unit))
    return found


def header(r: FleetReport | None = None) -> list[str]:
    """The columns; with a report, a rate column for every unit its instances count in."""
    columns = ["rank", "instance", "server", "scope"]
    columns += [*_figure("extra_cores_mean", None), *_figure("extra_cores_peak", None)]
    columns += [*_figure("host_share_pct", None), "host_cpus", "host_busy_cores"]
    for key, rate_units in _rate_columns(r).items():
        columns += [f"{key}_rate_{u}" for u in rate_units]
        columns += [*_figure(f"{key}_extra_cores", None), f"{key}_extra_cores_peak"]
    return [*columns, "tables_encrypted_now", "tls_now", "notes"]


def row(rank: int, e: InstanceEstimate) -> dict[str, Cell]:
    values: dict[str, Cell] = {
        "rank": rank,
        "instance": e.instance,
        "server": e.server,
        "scope": e.mean.scope,
    }
    values |= _figure("extra_cores_mean", e.mean.total.cores)
    values |= _figure("extra_cores_peak", e.peak.total.cores)
    values |= _figure("host_share_pct", e.mean.total.share_pct)
    values |= {"host_cpus": e.host_cores, "host_busy_cores": e.host_busy_cores}
    peak = {c.key: c for c in e.peak.causes}
    for c in e.mean.causes:
        values[f"{c.key}_rate_{_slug(c.rate_unit)}"] = None if c.rate is None else c.rate.value
        values |= _figure(f"{c.key}_extra_cores", c.cores)
        at_peak = peak[c.key].cores
        values[f"{c.key}_extra_cores_peak"] = None if at_peak is None else at_peak.value
    values |= {
        "tables_encrypted_now": e.on_now.get("table_reads"),
        "tls_now": e.on_now.get("tls_handshakes"),
        "notes": "; ".join(e.notes),
    }
    return values


def _text(value: Cell) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def render(r: FleetReport) -> str:
    columns = header(r)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    for rank, e in enumerate(r.instances, start=1):
        writer.writerow({k: _text(v) for k, v in row(rank, e).items()})
    for name in r.no_counters:
        writer.writerow({"instance": name, "scope": r.scope, "notes": not_estimated()})
    return out.getvalue()
